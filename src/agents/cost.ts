// What agents cost: their token counters priced by the config's table (USD per million tokens,
// per model). Pure. No prices are built in: an agent whose model has no price has no cost (and is
// shown with its tokens only).
import type { AgentRow } from "./agents.sql.js";

/** USD per million tokens. `cached_input` defaults to `input` (no discount assumed). */
export interface Price {
  input: number;
  cached_input?: number;
  output: number;
}

/** By model name, as the config's `prices`. */
export type Prices = Record<string, Price>;

/** The config's prices and its model (for agents without their own). */
export interface Pricing {
  prices: Prices;
  model?: string | null;
}

export type CostRow = Pick<AgentRow, "model" | "input_tokens" | "cached_tokens" | "output_tokens">;

/**
 * The agent's cost in USD per its model (its own, else `defaultModel`: the config's), or undefined
 * when that model has no price. Cached tokens are part of the input tokens, priced apart.
 */
export function agentCost(
  row: CostRow,
  prices: Prices,
  defaultModel?: string | null,
): number | undefined {
  const model = row.model ?? defaultModel;
  const price = model ? prices[model] : undefined;
  if (!price) return undefined;
  // Rows that came through JSON or raw SQL may carry bigints as strings.
  const input = Number(row.input_tokens);
  const cached = Math.min(Number(row.cached_tokens), input);
  const output = Number(row.output_tokens);
  const usd =
    (input - cached) * price.input +
    cached * (price.cached_input ?? price.input) +
    output * price.output;
  return usd / 1_000_000;
}

/** The sum over priced agents (reaped ones count: their tokens were spent); undefined if none is. */
export function treeCost(
  rows: Iterable<CostRow>,
  prices: Prices,
  defaultModel?: string | null,
): number | undefined {
  let total: number | undefined;
  for (const row of rows) {
    const usd = agentCost(row, prices, defaultModel);
    if (usd !== undefined) total = (total ?? 0) + usd;
  }
  return total;
}

/** `$0.0123` under a dollar (4 decimals; `<$0.0001` for a crumb), `$12.34` from a dollar up. */
export function formatUsd(usd: number): string {
  if (usd > 0 && usd < 0.00005) return "<$0.0001";
  return usd < 0.99995 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}
