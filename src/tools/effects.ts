// Effects happen once (SPEC §3): fork, send and kill commit their effect in the same transaction
// as their `tool_result` event. That transaction is fenced by the lease (the effect checks that
// this worker still holds the caller's lease, in lock order) and retried whole on transient
// database failures; a call whose result is already recorded is never executed again.
import { sql } from "drizzle-orm";
import { appendToolResult } from "../agents/events.js";
import type { Queryable } from "../db/client.js";
import { unreachableLine, withRetry } from "../db/retry.js";
import type { AgentToolContext } from "./agent-context.js";
import type { ToolOutcome } from "./tool.js";

/** The result this very call already committed (a replay after a crash or a retry), if any. */
async function recordedResult(
  tx: Queryable,
  ctx: AgentToolContext,
): Promise<ToolOutcome | undefined> {
  const rows = await tx.execute<{ id: string; content: string }>(sql`
    select id, content from events
     where agent_id = ${ctx.agent.id} and kind = 'tool_result' and id > ${ctx.assistantEventId}
       and data->>'tool_call_id' = ${ctx.toolCallId}
     order by id limit 1`);
  const row = rows.rows[0];
  if (!row) return undefined;
  let value: unknown = row.content;
  try {
    value = JSON.parse(row.content);
  } catch {
    // Recorded as plain text: pass it on as it is.
  }
  return { ok: true, value, recordedEventId: Number(row.id) };
}

/**
 * Runs `effect` and records its value as this call's `tool_result`, atomically. `effect` must
 * lock its rows in lock order and check the lease with `ctx.leaseOwner` (throwing LeaseLost);
 * an AgentError from it rolls everything back and becomes the tool's error result as usual.
 */
export async function commitEffect(
  ctx: AgentToolContext,
  tool: string,
  effect: (tx: Queryable) => Promise<unknown>,
): Promise<ToolOutcome> {
  return withRetry(
    () =>
      ctx.db.transaction(async (tx) => {
        const recorded = await recordedResult(tx, ctx);
        if (recorded) return recorded;
        const value = await effect(tx);
        const event = await appendToolResult(tx, ctx.agent.id, JSON.stringify(value), {
          tool_call_id: ctx.toolCallId,
          name: tool,
        });
        return { ok: true as const, value, recordedEventId: event.id };
      }),
    { signal: ctx.signal, onRetry: (err) => ctx.onWarning?.(unreachableLine(err)) },
  );
}
