// A tree's counters summed over its agents: what `warren ls` prints and the status bar shows.
import type { AgentRow } from "./agents.sql.js";

export type CounterRow = Pick<
  AgentRow,
  "turns" | "tool_calls" | "input_tokens" | "output_tokens" | "cached_tokens" | "reasoning_tokens"
>;

/** Sums of every counter; `cached_tokens` is part of `input_tokens`, `reasoning_tokens` of `output_tokens`. */
export interface TreeTotals {
  agents: number;
  turns: number;
  tool_calls: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
}

export function sumCounters(rows: Iterable<CounterRow>): TreeTotals {
  const totals: TreeTotals = {
    agents: 0,
    turns: 0,
    tool_calls: 0,
    input_tokens: 0,
    output_tokens: 0,
    cached_tokens: 0,
    reasoning_tokens: 0,
  };
  for (const row of rows) {
    totals.agents++;
    // Rows that came through JSON or raw SQL may carry bigints as strings.
    totals.turns += Number(row.turns);
    totals.tool_calls += Number(row.tool_calls);
    totals.input_tokens += Number(row.input_tokens);
    totals.output_tokens += Number(row.output_tokens);
    totals.cached_tokens += Number(row.cached_tokens);
    totals.reasoning_tokens += Number(row.reasoning_tokens);
  }
  return totals;
}
