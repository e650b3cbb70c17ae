// Idempotency keys of events (events.key, unique per agent). Every event a retry may write again
// carries one, so the database refuses the second copy: a write whose reply was lost, retried,
// finds the first instead of doing the work again (README "Exactly once by construction").
import { and, eq } from "drizzle-orm";
import type { Queryable } from "../db/client.js";
import { events, type EventRow } from "./events.sql.js";

export const eventKey = {
  /** The model's answer to the request whose context ended with event `lastContextId`. */
  assistant: (lastContextId: number) => `a:${lastContextId}`,
  /** A call of assistant event `assistantId`, shown in the scrollback (toolCallKeySql below). */
  toolCall: (assistantId: number, callId: string) => `c:${assistantId}:${callId}`,
  /** The one result of that call, whoever writes it (the tool, an interrupt, a resume). */
  toolResult: (assistantId: number, callId: string) => `r:${assistantId}:${callId}`,
  /** Mail (or queued input) taken into the transcript at the end of a turn. */
  mail: (mailId: number) => `m:${mailId}`,
  /** The summary of the conversation through event `throughId` (compaction.ts). */
  summary: (throughId: number) => `s:${throughId}`,
} as const;

/** eventKey.toolCall as SQL, for a statement that writes the calls' lines with their answer (whose
 * id it learns only there): `assistantId` and `callId` are SQL expressions. */
export function toolCallKeySql(assistantId: string, callId: string): string {
  return `'c:' || ${assistantId}::text || ':' || ${callId}`;
}

/**
 * What an effect that records its call's `tool_result` in its own statement stamps it with: the
 * result's key, the turn's lease epoch (null: not leased) and the call's id (tools/effects.ts).
 */
export interface ResultStamp {
  key: string;
  epoch: number | null;
  toolCallId: string;
  /** The call's span (telemetry), kept in the result's data; a fork's child descends from it. */
  traceparent?: string;
}

/** The unique index that enforces the keys. */
const KEY_INDEX = "events_key_idx";

/** Is `err` the database refusing a second event with the same key? */
export function isDuplicateKey(err: unknown): boolean {
  for (let current = err, depth = 0; current && depth < 5; depth++) {
    const e = current as { code?: unknown; constraint?: unknown; cause?: unknown };
    if (e.code === "23505" && e.constraint === KEY_INDEX) return true;
    current = e.cause;
  }
  return false;
}

/** The event recorded under `key`, if any. */
export async function recordedEvent(
  q: Queryable,
  agentId: string,
  key: string,
): Promise<EventRow | undefined> {
  const [row] = await q
    .select()
    .from(events)
    .where(and(eq(events.agent_id, agentId), eq(events.key, key)));
  return row;
}
