// End to end: cached input and reasoning tokens a server reports (prompt_tokens_details,
// completion_tokens_details) are counted on each agent's row, and `warren ls` totals the tree.
import { describe, expect, it } from "vitest";
import { after, agentNamed, isFirst, useE2E } from "./e2e-support.js";

const e2e = useE2E();

interface Counters {
  turns: number;
  tool_calls: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
}

const COUNTERS = [
  "turns",
  "tool_calls",
  "input_tokens",
  "output_tokens",
  "cached_tokens",
  "reasoning_tokens",
] as const;

const countersOf = (row: Counters): Counters =>
  Object.fromEntries(COUNTERS.map((k) => [k, Number(row[k])])) as unknown as Counters;

describe("token counters", () => {
  it("counts cached and reasoning tokens per agent and totals them in ls", async () => {
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [{ name: "fork", arguments: { name: "helper", prompt: "say hi" } }],
          usage: { input: 100, output: 10, cached: 60, reasoning: 4 },
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: {
          toolCalls: [{ name: "wait", arguments: { timeout: 30, from_agents: ["helper"] } }],
          usage: { input: 200, output: 20, cached: 150 },
        },
      },
      {
        agent: "root",
        match: after("wait"),
        reply: { text: "helper said hi", usage: { input: 300, output: 30, reasoning: 9 } },
      },
      {
        agent: "helper",
        match: isFirst,
        reply: {
          toolCalls: [{ name: "send", arguments: { to: "parent", message: "hi" } }],
          usage: { input: 50, output: 5, cached: 20, reasoning: 2 },
        },
      },
      {
        agent: "helper",
        match: after("send"),
        reply: { text: "sent", usage: { input: 70, output: 7, cached: 50, reasoning: 3 } },
      },
    ]);
    const run = await e2e.prompt("get the helper to say hi");
    expect(run.code).toBe(0);
    const treeId = run.json!.tree_id;
    // -p --json: the root's counters, cached and reasoning included.
    expect(run.json).toMatchObject({
      input_tokens: 600,
      output_tokens: 60,
      cached_tokens: 210,
      reasoning_tokens: 13,
    });

    // The rows: every response's details added to its own agent.
    const db = e2e.db();
    const root = { turns: 1, tool_calls: 2, input_tokens: 600, output_tokens: 60 };
    const helper = { turns: 1, tool_calls: 1, input_tokens: 120, output_tokens: 12 };
    expect(countersOf(await agentNamed(db, treeId, "root"))).toEqual({
      ...root,
      cached_tokens: 210,
      reasoning_tokens: 13,
    });
    expect(countersOf(await agentNamed(db, treeId, "helper"))).toEqual({
      ...helper,
      cached_tokens: 70,
      reasoning_tokens: 5,
    });

    // export (Markdown): each agent's facts name its cached and reasoning tokens.
    const exported = await e2e.warren(["export", treeId]);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toContain("tokens 600 in (210 cached) / 60 out (13 reasoning)");
    expect(exported.stdout).toContain("tokens 120 in (70 cached) / 12 out (5 reasoning)");

    // ls --json: the same counters per agent (the array shape is unchanged).
    const listed = await e2e.warren(["ls", "--json", "--tree", treeId]);
    expect(listed.code).toBe(0);
    const agents = JSON.parse(listed.stdout) as (Counters & { name: string })[];
    expect(agents.map((a) => [a.name, a.cached_tokens, a.reasoning_tokens])).toEqual([
      ["root", 210, 13],
      ["helper", 70, 5],
    ]);

    // ls: a total line under the table; --totals --json: the tree's sums as one object.
    const total =
      "total: 2 turns · 3 tool calls · tokens 720 in (280 cached) · 72 out (18 reasoning)";
    const text = await e2e.warren(["ls", "--tree", treeId]);
    expect(text.code).toBe(0);
    expect(text.stdout.trimEnd().split("\n").at(-1)).toBe(total);
    const totals = {
      tree_id: treeId,
      agents: 2,
      turns: 2,
      tool_calls: 3,
      input_tokens: 720,
      output_tokens: 72,
      cached_tokens: 280,
      reasoning_tokens: 18,
    };
    const json = await e2e.warren(["ls", "--totals", "--json", "--tree", treeId]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ ...totals, reaped: 0, cost_usd: null });

    // A reaped agent leaves the listing, not the totals: its tokens were spent all the same.
    const killed = await e2e.warren(["kill", "helper", "--tree", treeId]);
    expect(killed.stderr).toBe("");
    expect(killed.code).toBe(0);
    expect((await e2e.warren(["reap", "--tree", treeId])).code).toBe(0);
    const afterReap = await e2e.warren(["ls", "--json", "--tree", treeId]);
    expect((JSON.parse(afterReap.stdout) as { name: string }[]).map((a) => a.name)).toEqual([
      "root",
    ]);
    const reapedTotals = await e2e.warren(["ls", "--totals", "--json", "--tree", treeId]);
    expect(JSON.parse(reapedTotals.stdout)).toEqual({ ...totals, reaped: 1, cost_usd: null });
    const reapedText = await e2e.warren(["ls", "--totals", "--tree", treeId]);
    expect(reapedText.stdout.trim()).toBe(total.replace("total:", "total incl. 1 reaped:"));
  });
});
