// End to end: the inspection commands (`ls`, `log`, `export`) and `send` against a tree that a
// real `warren -p` run produced.
import { describe, expect, it } from "vitest";
import { after, agentNamed, isFirst, mailOf, useE2E } from "./e2e-support.js";

const e2e = useE2E();

interface AgentJson {
  id: string;
  tree_id: string;
  parent_id: string | null;
  name: string;
  state: string;
  tool_calls: number;
  input_tokens: number;
  output_tokens: number;
  turns: number;
}

describe("commands on a tree made by -p", () => {
  it("lists, logs, exports, and sends mail from the person", async () => {
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "helper", prompt: "count to 3", context: "fresh" } },
          ],
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: {
          toolCalls: [{ name: "wait", arguments: { timeout: 30, from_agents: ["helper"] } }],
        },
      },
      { agent: "root", match: after("wait"), reply: { text: "helper says 1 2 3" } },
      {
        agent: "helper",
        match: isFirst,
        reply: { toolCalls: [{ name: "send", arguments: { to: "parent", message: "1 2 3" } }] },
      },
      { agent: "helper", match: after("send"), reply: { text: "counted" } },
    ]);
    const run = await e2e.prompt("get the helper to count");
    expect(run.code).toBe(0);
    const treeId = run.json!.tree_id;

    // ls --json: every agent with its state and counters.
    const ls = await e2e.warren(["ls", "--json", "--tree", treeId]);
    expect(ls.code).toBe(0);
    const listed = JSON.parse(ls.stdout) as AgentJson[];
    expect(listed.map((a) => [a.name, a.state, a.parent_id])).toEqual([
      ["root", "idle", null],
      ["helper", "idle", treeId],
    ]);
    const helperId = listed[1]!.id;
    expect(listed[0]).toMatchObject({ id: treeId, tree_id: treeId, tool_calls: 2, turns: 1 });
    expect(listed[1]).toMatchObject({ tree_id: treeId, tool_calls: 1, turns: 1 });
    expect(listed[0]!.input_tokens).toBeGreaterThan(0);

    // ls (text) names both agents; a short id prefix selects the tree.
    const lsText = await e2e.warren(["ls", "--tree", treeId.slice(0, 8)]);
    expect(lsText.code).toBe(0);
    expect(lsText.stdout).toContain(`root ${treeId.slice(0, 8)}`);
    expect(lsText.stdout).toContain(`helper ${helperId.slice(0, 8)}`);

    // log: the transcript as text (by name within the tree) and as JSON (by id).
    const log = await e2e.warren(["log", "root", "--tree", treeId]);
    expect(log.code).toBe(0);
    expect(log.stdout).toContain("get the helper to count");
    expect(log.stdout).toContain("helper says 1 2 3");
    const logJson = await e2e.warren(["log", helperId, "--json"]);
    expect(logJson.code).toBe(0);
    const helperEvents = JSON.parse(logJson.stdout) as { kind: string; content: string }[];
    expect(helperEvents.map((e) => e.kind)).toEqual([
      "user",
      "assistant",
      "tool_call",
      "tool_result",
      "assistant",
    ]);
    expect(helperEvents[0]!.content).toBe("count to 3");

    // export: JSON with every agent and its events; Markdown with a heading per agent.
    const exported = await e2e.warren(["export", treeId, "--format", "json"]);
    expect(exported.code).toBe(0);
    const tree = JSON.parse(exported.stdout) as {
      tree_id: string;
      agents: (AgentJson & { events: { kind: string }[] })[];
    };
    expect(tree.tree_id).toBe(treeId);
    expect(tree.agents.map((a) => a.name)).toEqual(["root", "helper"]);
    expect(tree.agents[1]!.events.map((e) => e.kind)).toEqual(helperEvents.map((e) => e.kind));
    expect(tree.agents[0]!.events.map((e) => e.kind)).toContain("fork");

    const markdown = await e2e.warren(["export", treeId, "--format", "md"]);
    expect(markdown.code).toBe(0);
    expect(markdown.stdout).toMatch(new RegExp(`^# warren tree ${treeId.slice(0, 8)}`));
    expect(markdown.stdout).toContain(`## root ${treeId.slice(0, 8)}`);
    expect(markdown.stdout).toContain(`### helper ${helperId.slice(0, 8)}`);
    expect(markdown.stdout).toContain("helper says 1 2 3");

    // Bad usage is exit 2; an unknown agent is exit 1; each with one line on stderr first.
    const badFormat = await e2e.warren(["export", treeId, "--format", "xml"]);
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toMatch(/^warren: --format must be md or json/);
    const unknown = await e2e.warren(["log", "nosuch", "--tree", treeId]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim().split("\n")).toHaveLength(1);

    // send: mail from the person (from_id null) wakes the idle helper.
    const sent = await e2e.warren(["send", "helper", "count", "to", "4", "--tree", treeId]);
    expect(sent.stderr).toBe("");
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(new RegExp(`^sent mail #\\d+ to helper ${helperId.slice(0, 8)}`));
    const db = e2e.db();
    const personal = (await mailOf(db, treeId)).filter((m) => m.from_id === null);
    expect(personal.map((m) => [m.to_id, m.body, m.consumed_at])).toEqual([
      [helperId, "count to 4", null],
    ]);
    expect((await agentNamed(db, treeId, "helper")).state).toBe("running");
  });
});
