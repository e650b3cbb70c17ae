// What an agent and its tree have cost, for the `usd` budgets (turn-end.ts budgetProblem). The
// tree's total takes one query, made only when a tree-wide `usd` budget may apply.
import { sql } from "drizzle-orm";
import type { AgentRow } from "../agents/agents.sql.js";
import { agentCost, treeCost } from "../agents/cost.js";
import type { Config } from "../config/config.js";
import type { Queryable } from "../db/client.js";

export interface Spend {
  /** The agent's own cost, when its `budget.usd` is set (not on a root: its `usd` is the tree's). */
  agentUsd?: number;
  /** The tree's cost (every agent's, reaped included) and its root's `budget.usd`, when set. */
  tree?: { usd: number; budgetUsd: number };
}

export async function spending(q: Queryable, agent: AgentRow, config: Config): Promise<Spend> {
  const model = config.model.name ?? null;
  const spend: Spend = {};
  if (agent.parent_id !== null && agent.budget.usd !== undefined) {
    const usd = agentCost(agent, config.prices, model);
    if (usd !== undefined) spend.agentUsd = usd;
  }
  // The root's row holds the tree's budget; this process's `root_budget` says whether to look.
  const treeBudgetHint = agent.parent_id === null ? agent.budget.usd : config.rootBudget.usd;
  if (treeBudgetHint === undefined) return spend;
  const rows = await q.execute<{
    model: string | null;
    input_tokens: string;
    cached_tokens: string;
    output_tokens: string;
    budget_usd: number | null;
  }>(sql`
    select model, sum(input_tokens) as input_tokens, sum(cached_tokens) as cached_tokens,
           sum(output_tokens) as output_tokens,
           (select (budget->>'usd')::float8 from agents where id = ${agent.tree_id}) as budget_usd
      from agents where tree_id = ${agent.tree_id}
     group by model`);
  const budgetUsd = rows.rows[0]?.budget_usd;
  const usd = treeCost(
    rows.rows.map((r) => ({
      ...r,
      input_tokens: Number(r.input_tokens),
      cached_tokens: Number(r.cached_tokens),
      output_tokens: Number(r.output_tokens),
    })),
    config.prices,
    model,
  );
  if (budgetUsd !== null && budgetUsd !== undefined && usd !== undefined) {
    spend.tree = { usd, budgetUsd: Number(budgetUsd) };
  }
  return spend;
}
