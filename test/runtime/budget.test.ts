// budgetProblem: each budget of an agent (turns, tool_calls, tokens, wall_seconds, usd, the tree's
// usd) ends its turn with one line once reached; turns only as a new turn starts (AUDIT item 8).
import { describe, expect, it } from "vitest";
import type { AgentRow } from "../../src/agents/agents.sql.js";
import { budgetProblem } from "../../src/runtime/turn-end.js";

function agent(fields: Partial<AgentRow>): AgentRow {
  return {
    turns: 0,
    tool_calls: 0,
    input_tokens: 0,
    output_tokens: 0,
    budget: {},
    created_at: new Date(),
    ...fields,
  } as AgentRow;
}

describe("budgetProblem", () => {
  it("is silent under every budget and without one", () => {
    expect(budgetProblem(agent({}), true)).toBeUndefined();
    const under = agent({
      turns: 1,
      tool_calls: 2,
      input_tokens: 10,
      output_tokens: 5,
      budget: { turns: 2, tool_calls: 3, tokens: 16, wall_seconds: 60, usd: 1 },
    });
    expect(budgetProblem(under, true, { agentUsd: 0.5 })).toBeUndefined();
  });

  it("stops at the turns budget only as a new turn starts", () => {
    const spent = agent({ turns: 2, budget: { turns: 2 } });
    expect(budgetProblem(spent, true)).toMatch(/^turn budget exhausted \(2 of 2 turns\)/);
    expect(budgetProblem(spent, false)).toBeUndefined();
  });

  it("stops at the tool_calls, tokens and wall_seconds budgets mid-turn", () => {
    expect(budgetProblem(agent({ tool_calls: 3, budget: { tool_calls: 3 } }), false)).toMatch(
      /^tool call budget exhausted \(3 of 3 calls\)/,
    );
    expect(
      budgetProblem(agent({ input_tokens: 60, output_tokens: 40, budget: { tokens: 100 } }), false),
    ).toMatch(/^token budget exhausted \(100 of 100 tokens\)/);
    const old = agent({ created_at: new Date(Date.now() - 61_000), budget: { wall_seconds: 60 } });
    expect(budgetProblem(old, false)).toMatch(/^time budget exhausted \(61 of 60 s\)/);
  });

  it("stops at the agent's usd and at the tree's (root_budget.usd)", () => {
    expect(budgetProblem(agent({ budget: { usd: 1 } }), false, { agentUsd: 1.5 })).toMatch(
      /^cost budget exhausted/,
    );
    expect(budgetProblem(agent({}), false, { tree: { usd: 3, budgetUsd: 2 } })).toMatch(
      /^tree cost budget exhausted .* for the whole tree/,
    );
  });
});
