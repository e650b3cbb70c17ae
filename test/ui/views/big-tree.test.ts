// The panel and the status layer with a thousand agents: only the window of the panel is drawn and
// it scrolls with the selection; the status layer of a 200-agent fan-in folds what has no room
// into a count; a changed agent (a new row) or passing time shows at once, never a stale line.
import { describe, expect, it } from "vitest";
import type { AgentRow, WaitStatusEntry } from "../../../src/agents/agents.sql.js";
import { panelOrder } from "../../../src/ui/views/agent-panel.js";
import { renderAgentPanel, renderStatusLayer } from "../../../src/ui/views/index.js";
import { agent, NOW } from "./fixtures.js";
import { showWithin } from "./helpers.js";

const color = { color: true };
const pad = (n: number, width: number) => String(n).padStart(width, "0");

/** A root with 200 workers, then 40 teams of 19 members: 1,001 agents, oldest first. */
function bigTree() {
  const root = agent({ name: "root", state: "waiting", created_at: new Date(NOW - 10_000_000) });
  let age = 9_000_000;
  const under = (parent: AgentRow, name: string, fields: Partial<AgentRow> = {}) =>
    agent({
      name,
      parent_id: parent.id,
      tree_id: root.id,
      created_at: new Date(NOW - age--),
      ...fields,
    });
  const workers = Array.from({ length: 200 }, (_, i) =>
    under(root, `worker-${pad(i, 3)}`, { state: "running", activity: "thinking" }),
  );
  const teams: AgentRow[] = [];
  const members: AgentRow[] = [];
  for (let t = 0; t < 40; t++) {
    const lead = under(root, `team-${pad(t, 2)}`, { state: "waiting" });
    teams.push(lead);
    for (let m = 0; m < 19; m++) members.push(under(lead, `member-${pad(t, 2)}-${pad(m, 2)}`));
  }
  // Shuffled, as a Map of rows read in any order would give them.
  const all = [...members, ...teams, ...workers, root].reverse();
  return { root, workers, teams, members, all };
}

describe("the agent panel of a thousand agents", () => {
  it("orders them as a tree, each team's members under it", () => {
    const t = bigTree();
    const order = panelOrder(t.all);
    expect(order).toHaveLength(1001);
    expect(order[0]).toEqual({ agent: t.root, depth: 0 });
    expect(order.slice(1, 201).map((r) => r.agent.name)).toEqual(t.workers.map((w) => w.name));
    expect(order[201]).toEqual({ agent: t.teams[0], depth: 1 });
    expect(order[202]).toEqual({ agent: t.members[0], depth: 2 });
    expect(order[221]!.agent.name).toBe("team-01");
    expect(order.at(-1)!.agent.name).toBe("member-39-18");
  });

  it("draws only the window, which follows the selection down and back up", () => {
    const t = bigTree();
    const order = panelOrder(t.all).map((r) => r.agent);
    const height = 34;
    for (const at of [0, 1, 16, 17, 18, 60, 500, 1000, 999, 60, 17, 0]) {
      const selected = order[at]!;
      const panel = renderAgentPanel(t.all, selected.id, NOW, 100, height, color);
      expect(panel.lines).toHaveLength(height);
      expect(panel.order).toHaveLength(1001);
      const rows = showWithin(panel.lines, 100);
      const marked = rows.filter((r) => r.startsWith("›"));
      expect(marked).toHaveLength(1);
      expect(marked[0]).toContain(`${selected.name} `);
      // The window: the selection about in the middle, clamped at the ends of the list.
      const start = Math.max(0, Math.min(at - height / 2, order.length - height));
      const names = rows.map((r) => /[◐◌○✗] (\S+) /.exec(r)?.[1]);
      expect(names).toEqual(order.slice(start, start + height).map((a) => a.name));
    }
  });

  it("shows a changed agent and passing time at once", () => {
    const t = bigTree();
    const rowOf = (all: AgentRow[], now: number) =>
      showWithin(renderAgentPanel(all, t.root.id, now, 100, 10, color).lines, 100)[1]!;
    const before = rowOf(t.all, NOW);
    expect(before).toMatch(/worker-000 .* 0 tok · 0 calls · 5s$/);
    expect(rowOf(t.all, NOW)).toBe(before);
    // The feed replaces a changed agent's row.
    const busier = { ...t.workers[0]!, tool_calls: 7, output_tokens: 2_000 };
    const all = t.all.map((a) => (a.id === busier.id ? busier : a));
    expect(rowOf(all, NOW)).toMatch(/worker-000 .* 2k tok · 7 calls · 5s$/);
    expect(rowOf(all, NOW + 60_000)).toMatch(/worker-000 .* 7 calls · ! 1m silent$/);
  });
});

describe("the status layer of a 200-agent fan-in", () => {
  const setup = () => {
    const t = bigTree();
    const byId = new Map(t.all.map((a) => [a.id, a]));
    const wait: WaitStatusEntry[] = t.workers.map((w, i) => ({
      agent_id: w.id,
      name: w.name,
      status: i % 10 === 3 ? "received" : i === 150 ? "dead" : "running",
    }));
    return { t, byId, wait };
  };

  it("lists every awaited agent when it has room", () => {
    const { byId, wait } = setup();
    const rows = showWithin(renderStatusLayer(wait, byId, NOW, 110, color), 110);
    expect(rows).toHaveLength(200);
    expect(rows[199]).toMatch(/◐ running +worker-199 /);
  });

  it("folds the agents it has no room for into one line counting them by status", () => {
    const { byId, wait } = setup();
    const rows = showWithin(renderStatusLayer(wait, byId, NOW, 110, color, undefined, 16), 110);
    expect(rows).toHaveLength(16);
    expect(rows[0]).toMatch(/◐ running +worker-000 /);
    expect(rows[3]).toMatch(/✓ received +worker-003 /);
    expect(rows[14]).toMatch(/◐ running +worker-014 /);
    // 185 not shown: of them 18 received (worker-023 … 193), one dead, the rest running.
    expect(rows[15]).toBe("  … 185 more: 166 running · 18 received · 1 dead");
    expect(renderStatusLayer(wait.slice(0, 16), byId, NOW, 110, color, undefined, 16)).toEqual(
      renderStatusLayer(wait.slice(0, 16), byId, NOW, 110, color),
    );
  });

  it("shows a changed status, a changed agent and passing time at once", () => {
    const { t, byId, wait } = setup();
    const first = (w: WaitStatusEntry[], rows: Map<string, AgentRow>, now: number) =>
      showWithin(renderStatusLayer(w, rows, now, 110, color, undefined, 5), 110)[0]!;
    expect(first(wait, byId, NOW)).toMatch(
      /◐ running +worker-000 [0-9a-f]{8} +0 calls · 0 tok · 5s ago$/,
    );
    const received = [{ ...wait[0]!, status: "received" as const }, ...wait.slice(1)];
    expect(first(received, byId, NOW)).toMatch(/✓ received +worker-000 /);
    const busier = new Map(byId).set(t.workers[0]!.id, { ...t.workers[0]!, tool_calls: 3 });
    expect(first(received, busier, NOW)).toMatch(
      /worker-000 [0-9a-f]{8} +3 calls · 0 tok · 5s ago$/,
    );
    expect(first(received, busier, NOW + 60_000)).toMatch(/3 calls · 0 tok · 1m ago$/);
  });
});
