// The agent-row counter increments for one model response's usage (a turn's step or a compaction).
import { sql, type SQL } from "drizzle-orm";
import { agents } from "../agents/agents.sql.js";
import type { Usage } from "../llm/model.js";

/** `set` values that add `usage` to the agent's token counters, all four in the same update. */
export function addUsage(
  usage: Usage,
): Record<"input_tokens" | "output_tokens" | "cached_tokens" | "reasoning_tokens", SQL> {
  return {
    input_tokens: sql`${agents.input_tokens} + ${usage.inputTokens}`,
    output_tokens: sql`${agents.output_tokens} + ${usage.outputTokens}`,
    cached_tokens: sql`${agents.cached_tokens} + ${usage.cachedTokens ?? 0}`,
    reasoning_tokens: sql`${agents.reasoning_tokens} + ${usage.reasoningTokens ?? 0}`,
  };
}
