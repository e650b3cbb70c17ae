// Effects happen once (SPEC §3): fork, send and kill commit their effect in the same transaction
// as their `tool_result` event, keyed by the call (event-keys.ts) and stamped with the turn's
// lease epoch, so the database refuses both a second result for the call and a stale worker's.
// The transaction is retried whole on transient failures; a retry (whose earlier attempt may have
// committed with its reply lost) first reads what was recorded, and a duplicate refused by the
// key is answered with the recorded result: the effect is never committed twice.
import { appendToolResult } from "../agents/events.js";
import { eventKey, isDuplicateKey, recordedEvent, type ResultStamp } from "../agents/event-keys.js";
import { isAgentError } from "../agents/errors.js";
import type { Queryable } from "../db/client.js";
import { withRetry } from "../db/retry.js";
import { outage } from "../db/warning.js";
import type { AgentToolContext } from "./agent-context.js";
import type { ToolOutcome } from "./tool.js";

/** The result this very call already committed (a replay after a crash or a retry), if any. */
/** The result this call recorded already (a replay, or a result handed to it), if any. */
export async function recordedResult(
  q: Queryable,
  ctx: AgentToolContext,
): Promise<ToolOutcome | undefined> {
  const row = await recordedEvent(q, ctx.agent.id, resultKey(ctx));
  if (!row) return undefined;
  let value: unknown = row.content;
  try {
    value = JSON.parse(row.content);
  } catch {
    // Recorded as plain text: pass it on as it is.
  }
  return { ok: true, value, recordedEventId: row.id };
}

function resultKey(ctx: AgentToolContext): string {
  return eventKey.toolResult(ctx.assistantEventId, ctx.toolCallId);
}

/**
 * Runs `effect` and records its value as this call's `tool_result`, atomically. `effect` must
 * lock its rows in lock order and check the lease with `ctx.fence` (throwing LeaseLost);
 * an AgentError from it rolls everything back and becomes the tool's error result as usual.
 */
export async function commitEffect(
  ctx: AgentToolContext,
  tool: string,
  effect: (tx: Queryable) => Promise<unknown>,
): Promise<ToolOutcome> {
  return commitOnce(ctx, () =>
    ctx.db.transaction(async (tx) => {
      const value = await effect(tx);
      const event = await appendToolResult(
        tx,
        ctx.agent.id,
        JSON.stringify(value),
        { tool_call_id: ctx.toolCallId, name: tool },
        { key: resultKey(ctx), epoch: ctx.fence?.epoch },
      );
      return { ok: true as const, value, recordedEventId: event.id };
    }),
  );
}

/** What an effect that records its own result in its statement stamps it with. */
export function resultStamp(ctx: AgentToolContext): ResultStamp {
  return {
    key: resultKey(ctx),
    epoch: ctx.fence?.epoch ?? null,
    toolCallId: ctx.toolCallId,
    ...(ctx.traceparent !== undefined && { traceparent: ctx.traceparent }),
  };
}

/**
 * Runs `attempt`, which commits an effect with this call's keyed result (in one statement or
 * one transaction), retried whole on transient failures. A retry first reads what an earlier
 * attempt recorded; a duplicate refused by the key is answered with the recorded result.
 */
export async function commitOnce(
  ctx: AgentToolContext,
  attempt: () => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  return withRetry(
    async (n) => {
      if (n > 1) {
        const recorded = await recordedResult(ctx.db, ctx);
        if (recorded) return recorded;
      }
      try {
        return await attempt();
      } catch (err) {
        // This call's result is recorded already (a replay): that one stands, this rolled back.
        // A replayed effect may also fail on its own first effect (kill: "already dead").
        const replay = isDuplicateKey(err) || isAgentError(err);
        const recorded = replay ? await recordedResult(ctx.db, ctx) : undefined;
        if (recorded) return recorded;
        throw err;
      }
    },
    { signal: ctx.signal, onRetry: (err) => ctx.onWarning?.(outage(err)) },
  );
}
