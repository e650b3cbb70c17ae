// Finding agents fast: the panel filtered as you type (name, id, state, activity; the screen shows
// only matches), and which agent needs the person next — approval, error, finished since viewed.
import { describe, expect, it } from "vitest";
import type { AgentRow } from "../../../src/agents/agents.sql.js";
import {
  filterAgents,
  needOf,
  nextNeeding,
  noteNeed,
  panelKeys,
  type Need,
} from "../../../src/ui/views/agent-filter.js";
import { approvalMarks, renderAgentPanel } from "../../../src/ui/views/index.js";
import { agent, event, NOW } from "./fixtures.js";
import { screenText } from "./helpers.js";

const root = agent({ name: "root", state: "waiting", activity: "waiting for 3 agents" });
let age = 500_000;
/** A child of the root, each younger than the last (the panel lists them in that order). */
const under = (fields: Partial<AgentRow> & { name: string }) =>
  agent({
    parent_id: root.id,
    tree_id: root.id,
    created_at: new Date(NOW - (age -= 1000)),
    ...fields,
  });
const files = under({ name: "files", state: "running", activity: "bash: wc -l src/*.ts" });
const tests = under({ name: "tests", state: "idle" });
const docs = under({ name: "docs", state: "dead" });
const all = [root, files, tests, docs];
const names = (agents: readonly AgentRow[]) => agents.map((a) => a.name);

describe("filterAgents", () => {
  it("matches name, id prefix, state and activity, any case, every word", () => {
    expect(names(filterAgents(all, ""))).toEqual(["root", "files", "tests", "docs"]);
    expect(names(filterAgents(all, "TES"))).toEqual(["tests"]);
    expect(names(filterAgents(all, "dead"))).toEqual(["docs"]);
    expect(names(filterAgents(all, "wc -l"))).toEqual(["files"]);
    expect(names(filterAgents(all, files.id.slice(0, 6)))).toEqual(["files"]);
    expect(names(filterAgents(all, "idle s"))).toEqual(["tests"]);
    expect(filterAgents(all, "zebra")).toEqual([]);
  });

  it("draws only the matches in the panel, the filter in its title", () => {
    const width = 80;
    const { lines, order } = renderAgentPanel(
      filterAgents(all, "te"),
      tests.id,
      NOW,
      width,
      4,
      { color: true },
      ` agents${panelKeys("te")}`,
    );
    const text = screenText(lines, width + 2);
    expect(order).toEqual([tests.id]);
    expect(text).toContain("agents — filter: te▍ · ↑↓ select · Enter go · Esc clears");
    expect(text).toContain("tests");
    expect(text).not.toContain("files");
    expect(text).not.toContain("root");
  });

  it("says how to filter while nothing is typed", () => {
    expect(panelKeys("")).toContain("type to filter");
  });
});

describe("agents that need the person", () => {
  type Needs = Map<string, Exclude<Need, "approval">>;

  it("notes a turn that finished or failed out of view, not the viewed agent's", () => {
    const needs: Needs = new Map();
    const busy = under({ name: "w", state: "running" });
    noteNeed(needs, root.id, { before: busy, after: { ...busy, state: "idle" } });
    expect(needs.get(busy.id)).toBe("finished");
    noteNeed(needs, root.id, {
      event: event("error", "model failed", null, { agent_id: files.id }),
    });
    noteNeed(needs, root.id, { before: files, after: { ...files, state: "idle" } });
    expect(needs.get(files.id)).toBe("error");
    // A whole turn between two rows read, or a new agent's first: the turn counter tells.
    const quick = under({ name: "q", state: "idle", turns: 1 });
    noteNeed(needs, root.id, { before: quick, after: { ...quick, turns: 2 } });
    const fresh = under({ name: "f", state: "idle", turns: 1 });
    noteNeed(needs, root.id, { before: undefined, after: fresh });
    expect(needs.get(quick.id)).toBe("finished");
    expect(needs.get(fresh.id)).toBe("finished");
    needs.delete(quick.id);
    needs.delete(fresh.id);
    // Viewed: nothing to catch up on. Idle to idle (a counter changed): not a finish.
    noteNeed(needs, tests.id, { before: { ...tests, state: "running" }, after: tests });
    noteNeed(needs, root.id, { before: docs, after: docs });
    noteNeed(needs, root.id, { event: event("error", "x", null, { agent_id: root.id }) });
    expect([...needs.keys()].sort()).toEqual([busy.id, files.id].sort());
  });

  it("counts an open approval request first", () => {
    const asking = { ...files, activity: "? needs approval 12: bash: rm -rf build" };
    const needs: Needs = new Map([[files.id, "finished"]]);
    expect(needOf(asking, needs)).toBe("approval");
    expect(needOf(files, needs)).toBe("finished");
    const marks = approvalMarks(all, [
      { id: 3, agent_id: tests.id, tool: "bash", subject: "ls", created_at: new Date(NOW) },
    ] as never);
    expect(needOf(tests, new Map(), marks)).toBe("approval");
    expect(needOf(docs, new Map(), marks)).toBeUndefined();
  });

  it("goes to the next one after the viewed agent in panel order, wrapping", () => {
    const needs: Needs = new Map([
      [root.id, "finished"],
      [docs.id, "error"],
    ]);
    expect(nextNeeding(all, files.id, needs)).toMatchObject({
      agent: { name: "docs" },
      need: "error",
    });
    expect(nextNeeding(all, docs.id, needs)).toMatchObject({
      agent: { name: "root" },
      need: "finished",
    });
    expect(nextNeeding(all, root.id, new Map([[root.id, "finished"]]))).toBeUndefined();
  });
});
