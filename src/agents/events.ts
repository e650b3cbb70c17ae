// Appending to and reading an agent's transcript.
import { and, asc, eq, gt, lt, sql } from "drizzle-orm";
import { DURABLE_COMMIT, type Queryable } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import { events, type EventKind, type EventRow } from "./events.sql.js";
import { recordedEvent } from "./event-keys.js";
import { scrubJson, scrubText } from "./text.js";

/**
 * How a turn's write is marked: its idempotency key (event-keys.ts) and the lease epoch of the
 * turn (errors.ts Fence), which the database checks on insert. Writes of people carry neither.
 */
export interface EventStamp {
  key?: string;
  epoch?: number;
}

export async function appendEvent(
  q: Queryable,
  agentId: string,
  kind: EventKind,
  content: string,
  data?: Record<string, unknown>,
  stamp: EventStamp = {},
): Promise<EventRow> {
  const [row] = await q
    .insert(events)
    .values(eventValues(agentId, kind, content, data, stamp))
    .returning();
  return row!;
}

function eventValues(
  agentId: string,
  kind: EventKind,
  content: string,
  data: Record<string, unknown> | undefined,
  stamp: EventStamp,
) {
  // Model text and tool output may hold NUL or lone surrogates, which Postgres cannot store.
  return {
    agent_id: agentId,
    kind,
    content: scrubText(content),
    data: scrubJson(data ?? null),
    key: stamp.key ?? null,
    epoch: stamp.epoch ?? null,
  };
}

/**
 * Appends a keyed event unless one with its key is recorded already: then that one is returned,
 * with `fresh` false, and nothing is written (the transaction goes on).
 */
export async function appendEventOnce(
  q: Queryable,
  agentId: string,
  kind: EventKind,
  content: string,
  data: Record<string, unknown> | undefined,
  stamp: EventStamp & { key: string },
): Promise<{ row: EventRow; fresh: boolean }> {
  const [row] = await q
    .insert(events)
    .values(eventValues(agentId, kind, content, data, stamp))
    .onConflictDoNothing({ target: [events.agent_id, events.key], where: sql`key is not null` })
    .returning();
  if (row) return { row, fresh: true };
  const recorded = await recordedEvent(q, agentId, stamp.key);
  if (!recorded)
    throw new Error(`event ${stamp.key} of agent ${agentId} conflicted but is missing`);
  return { row: recorded, fresh: false };
}

/**
 * Records a tool call's result and counts the call, in one statement (a data-modifying CTE): the
 * count moves with the result, so a call replayed after a crash (its result already recorded) is
 * counted once. The stamp's key makes a second result for the same call a unique violation
 * (isDuplicateKey). `durable` commits it durably in a session with relaxed commits (Tool.outside).
 */
export async function appendToolResult(
  q: Queryable,
  agentId: string,
  content: string,
  data: Record<string, unknown>,
  stamp: EventStamp = {},
  options: { durable?: boolean } = {},
): Promise<EventRow> {
  const values = eventValues(agentId, "tool_result", content, data, stamp);
  const [row] = await runPrepared<RawEvent>(
    q,
    options.durable ? TOOL_RESULT_DURABLE : TOOL_RESULT,
    [agentId, values.content, jsonOrNull(values.data), values.key, values.epoch],
  );
  return eventFromRaw(row!);
}

const jsonOrNull = (value: unknown) => (value === null ? null : JSON.stringify(value));

/** An events row as pg returns it (bigint as text), for eventFromRaw. */
export type RawEvent = Omit<EventRow, "id" | "epoch"> & { id: string; epoch: string | null };

export function eventFromRaw(row: RawEvent): EventRow {
  return { ...row, id: Number(row.id), epoch: row.epoch === null ? null : Number(row.epoch) };
}

/**
 * The CTE `counted` (or `name`) of a statement that records a call's `tool_result`: the agent's
 * call count, moved with the result (a call replayed after a crash is counted once). `agent` and
 * `epoch` are SQL expressions, usually the statement's parameters ("$1"); `when` must hold for
 * the count (e.g. the effect happened). Moving the epoch to the turn's lets agents_fence refuse
 * the count of a stale worker.
 */
export function countedCte(agent: string, epoch: string, when: string, name = "counted"): string {
  return `${name} as (
    update agents set tool_calls = tool_calls + 1, last_activity_at = now(),
                      lease_epoch = coalesce(${epoch}::bigint, lease_epoch)
     where id = ${agent}::uuid and ${when}
    returning id
  )`;
}

const toolResultText = (durable: boolean) => `
  with ${countedCte("$1", "$5", `(${durable ? DURABLE_COMMIT : "select true"}) is not null`)}
  insert into events (agent_id, kind, content, data, key, epoch)
  values ($1::uuid, 'tool_result', $2::text, $3::jsonb, $4::text, $5::bigint)
  returning *`;
const TOOL_RESULT: Prepared = { name: "warren_tool_result", text: toolResultText(false) };
const TOOL_RESULT_DURABLE: Prepared = {
  name: "warren_tool_result_durable",
  text: toolResultText(true),
};

/**
 * Records a call's result unless the call has one already (an interrupt or a resume answering a
 * call that may have been answered meanwhile), and counts the call only with a result it records,
 * in one statement: a call answered by whoever stopped it counts once, as if its tool had.
 * Returns whether it recorded one.
 */
export async function appendToolResultOnce(
  q: Queryable,
  agentId: string,
  content: string,
  data: Record<string, unknown>,
  stamp: EventStamp & { key: string },
): Promise<boolean> {
  const values = eventValues(agentId, "tool_result", content, data, stamp);
  const rows = await runPrepared<{ id: string }>(q, TOOL_RESULT_ONCE, [
    agentId,
    values.content,
    jsonOrNull(values.data),
    values.key,
    values.epoch,
  ]);
  return rows.length > 0;
}

const TOOL_RESULT_ONCE: Prepared = {
  name: "warren_tool_result_once",
  text: `
  with ins as (
    insert into events (agent_id, kind, content, data, key, epoch)
    values ($1::uuid, 'tool_result', $2::text, $3::jsonb, $4::text, $5::bigint)
    on conflict (agent_id, key) where key is not null do nothing
    returning id
  ), ${countedCte("$1", "$5", "exists (select 1 from ins)")}
  select id from ins`,
};

export async function countToolCall(
  q: Pick<Queryable, "execute">,
  agentId: string,
  epoch?: number,
): Promise<void> {
  await q.execute(sql`
    update agents set tool_calls = tool_calls + 1, last_activity_at = now(),
                      lease_epoch = ${epoch === undefined ? sql`lease_epoch` : sql`${epoch}`}
     where id = ${agentId}`);
}

export interface EventRange {
  /** Only events with a larger id. */
  after?: number;
  /** Only events with a smaller id. */
  before?: number;
  /** At most this many (the oldest of the range). */
  limit?: number;
}

export async function listEvents(
  q: Queryable,
  agentId: string,
  range: EventRange = {},
): Promise<EventRow[]> {
  const query = q
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
  return range.limit === undefined ? query : query.limit(range.limit);
}

/**
 * The newest `limit` events (before `before`, when given), oldest first: one page of history.
 * Read by warren_recent_events (migrations/0013_recent_events.sql), which walks the agent's index
 * backwards: a page costs the page, however long the history and whatever the statistics say.
 */
export async function listRecentEvents(
  q: Queryable,
  agentId: string,
  options: { before?: number; limit: number },
): Promise<EventRow[]> {
  const rows = await runPrepared<RawEvent>(q, RECENT_EVENTS, [
    agentId,
    options.before ?? null,
    options.limit,
  ]);
  return rows.map(eventFromRaw).reverse();
}

const RECENT_EVENTS: Prepared = {
  name: "warren_recent_events",
  text: "select * from warren_recent_events($1::uuid, $2::bigint, $3::int)",
};
