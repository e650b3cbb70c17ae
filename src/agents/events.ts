// Appending to and reading an agent's transcript.
import { and, asc, desc, eq, gt, lt, sql } from "drizzle-orm";
import type { Queryable } from "../db/client.js";
import { events, type EventKind, type EventRow } from "./events.sql.js";
import { scrubJson, scrubText } from "./text.js";

export async function appendEvent(
  q: Queryable,
  agentId: string,
  kind: EventKind,
  content: string,
  data?: Record<string, unknown>,
): Promise<EventRow> {
  const [row] = await q
    .insert(events)
    // Model text and tool output may hold NUL or lone surrogates, which Postgres cannot store.
    .values({ agent_id: agentId, kind, content: scrubText(content), data: scrubJson(data ?? null) })
    .returning();
  return row!;
}

/**
 * Records a tool call's result and counts the call, in the caller's transaction: the count moves
 * with the result, so a call replayed after a crash (its result already recorded) is counted once.
 */
export async function appendToolResult(
  q: Queryable,
  agentId: string,
  content: string,
  data: Record<string, unknown>,
): Promise<EventRow> {
  const row = await appendEvent(q, agentId, "tool_result", content, data);
  await countToolCall(q, agentId);
  return row;
}

export async function countToolCall(q: Pick<Queryable, "execute">, agentId: string): Promise<void> {
  await q.execute(sql`
    update agents set tool_calls = tool_calls + 1, last_activity_at = now() where id = ${agentId}`);
}

export interface EventRange {
  /** Only events with a larger id. */
  after?: number;
  /** Only events with a smaller id. */
  before?: number;
}

export async function listEvents(
  q: Queryable,
  agentId: string,
  range: EventRange = {},
): Promise<EventRow[]> {
  return q
    .select()
    .from(events)
    .where(
      and(
        eq(events.agent_id, agentId),
        range.after !== undefined ? gt(events.id, range.after) : undefined,
        range.before !== undefined ? lt(events.id, range.before) : undefined,
      ),
    )
    .orderBy(asc(events.id));
}

/** The newest `limit` events (before `before`, when given), oldest first: one page of history. */
export async function listRecentEvents(
  q: Queryable,
  agentId: string,
  options: { before?: number; limit: number },
): Promise<EventRow[]> {
  const rows = await q
    .select()
    .from(events)
    .where(
      and(
        eq(events.agent_id, agentId),
        options.before !== undefined ? lt(events.id, options.before) : undefined,
      ),
    )
    .orderBy(desc(events.id))
    .limit(options.limit);
  return rows.reverse();
}
