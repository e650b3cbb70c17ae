// wait: the oldest mail, or fan-in over several agents. Woken by NOTIFY, with a slow safety
// re-check; consuming mail and recording the event that received it happen in one statement or
// transaction, so mail is never lost and never delivered twice.
import type { WorktreeInfo } from "../agents/agents.sql.js";
import { changesOf, type Changes } from "../agents/worktree.js";
import { sql } from "drizzle-orm";
import type { Db, Queryable } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import type { EventKind } from "../agents/events.sql.js";
import { AgentError, LeaseLost, type Fence } from "../agents/errors.js";
import { assertLease } from "../agents/lock-order.js";
import { isDuplicateKey, recordedEvent } from "../agents/event-keys.js";
import { countToolCall } from "../agents/events.js";
import { isUuid } from "../agents/refs.js";
import { agentChannel, CHILD_HINT } from "../bus/channels.js";
import { UNLISTENED_POLL_MS, type Bus } from "../bus/bus.js";
import { WakeLoop } from "../bus/wake-loop.js";
import { blockUntilRechecked } from "./recheck.js";
import { PERSON } from "../llm/framing.js";
import { mailResultSql, parseHanded, type Handed } from "./handoff.js";

export interface NextMail {
  from: string;
  from_name: string;
  message: string;
  /** A child's final answer (a `send {final: true}` or its turn's text mailed for it). */
  final?: boolean;
  /** The message parsed, when the sender's output schema accepted it (mail.result). */
  result?: unknown;
}
export type WaitTimeout = { status: "timeout" };
export type FanInStatus = "received" | "dead" | "failed" | "idle" | "running";
export interface FanInEntry {
  agent_id: string;
  name: string;
  status: FanInStatus;
  message?: string;
  /** A child's final answer (its turn's text mailed for it: mail/final-answer.ts). */
  final?: boolean;
  /** The message parsed, when the child has an output schema (fork's output_schema). */
  result?: unknown;
  /** A `failed` agent's: why its last turn failed (the server's message). */
  error?: string;
  /** A worktree child's change against its base (files, lines added and removed). */
  changes?: Changes;
}
export type WaitResult = NextMail | WaitTimeout | { results: FanInEntry[] };

export interface WaitRequest {
  agentId: string;
  timeoutSeconds: number;
  /** Resolved agent ids for fan-in; absent = the oldest mail from anyone. */
  fromAgents?: string[];
  signal?: AbortSignal;
  /**
   * The event that receives the result (its content is the result's JSON text). With a `key`
   * (the tool call's, event-keys.ts) the database records one result per call: a retried wait
   * whose first attempt committed returns what that one took, and takes nothing more.
   */
  record?: { kind: EventKind; data?: Record<string, unknown>; key?: string };
  /** A retry of a wait that may have committed (its reply lost): look for its result first. */
  replay?: boolean;
  /**
   * Called with the per-agent state at every check (the status layer); `stored` when the check
   * wrote it as the waiter's `wait_status` itself (see storeStatus).
   */
  onProgress?: (entries: FanInEntry[], stored: boolean) => void;
  /**
   * A fan-in's look also writes the per-agent state as the waiter's `wait_status` when it
   * changed, in its own statement (fenced like any write of the turn): the status layer's
   * source, one statement fewer per change than writing it after the look.
   */
  storeStatus?: boolean;
  /** Called once when the wait first finds nothing and sleeps (its scheduler slot may be lent). */
  onBlock?: () => void;
  /**
   * The lease of the waiting agent's turn: consuming mail and recording the result commit only
   * while it still holds the lease (else LeaseLost, nothing taken). Absent: not leased.
   */
  fence?: Fence;
  /**
   * This wait's own safety re-check interval covering a lost NOTIFY; absent: the thread's shared
   * sweep (recheck.ts), one query for all of its blocked waits.
   */
  recheckMs?: number;
}

export interface WaitOutcome {
  result: WaitResult;
  /** The event that recorded the result and consumed the mail. */
  eventId: number;
  consumedMailIds: number[];
}

function abortError(): Error {
  const err = new Error("wait interrupted");
  err.name = "AbortError";
  return err;
}

export async function waitForMail(db: Db, bus: Bus, request: WaitRequest): Promise<WaitOutcome> {
  const timeoutMs = Math.max(0, request.timeoutSeconds) * 1000;
  const deadline = Date.now() + timeoutMs;
  const fromAgents = request.fromAgents ? [...new Set(request.fromAgents)] : undefined;
  if (request.replay) {
    const recorded = await recordedOutcome(db, request);
    if (recorded) return recorded;
  }
  if (fromAgents) await assertAgentsExist(db, fromAgents);

  // A keyed wait for the oldest mail registers before it blocks, so that a send hands the mail
  // over (handoff.ts): its result then comes in the notification, committed and recorded.
  const key = request.record?.key;
  const register = key !== undefined && !fromAgents && timeoutMs > 0;
  let registered = false;
  let handed: Handed | undefined;
  const loop = new WakeLoop();
  const wake = (payload?: unknown) => {
    // A child's state matters only to a fan-in; a wait for mail has nothing new to look for.
    if (payload === CHILD_HINT && !fromAgents) return;
    if (register && typeof payload === "string") {
      const note = parseHanded(payload);
      if (note?.key === key) handed = note;
    }
    loop.wake();
  };
  // Its own channel only: mail, and a fan-in's children's state changes (CHILD_HINT).
  const unsubscribe =
    timeoutMs > 0 ? await bus.subscribeAll([agentChannel(request.agentId)], wake) : () => {};
  // The safety re-check: the thread's shared sweep (recheck.ts), or this wait's own timer when
  // the request sets an interval. Without NOTIFYs (LISTEN off or down) either runs every second.
  const ownRecheck = request.recheckMs;
  const recheckMs = () =>
    ownRecheck === undefined
      ? Infinity
      : bus.listening()
        ? ownRecheck
        : Math.min(ownRecheck, UNLISTENED_POLL_MS);
  const offListening = bus.onListeningChange(() => loop.retime());
  const leaveSweep =
    ownRecheck === undefined && timeoutMs > 0
      ? blockUntilRechecked(db, bus, {
          agentId: request.agentId,
          fromAgents,
          key: register ? key : undefined,
          wake,
        })
      : () => {};
  let settled = false;
  try {
    const outcome = await loop.run<WaitOutcome>({
      deadline,
      signal: request.signal,
      abortError,
      recheckMs,
      onBlock: request.onBlock,
      handed: async () => {
        if (!handed) return undefined;
        // Handed over (handoff.ts): the send recorded this call's result and consumed the mail.
        const given = handed;
        handed = undefined;
        return given.result
          ? {
              result: given.result as WaitResult,
              eventId: given.event,
              consumedMailIds: [given.mail],
            }
          : await recordedOutcome(db, request);
      },
      look: async (final) => {
        const outcome = await (
          fromAgents
            ? attemptFanIn(db, request, fromAgents, final)
            : attemptNext(db, request, final, register)
        ).catch(async (err: unknown) => {
          // The database refused a second result for this call: the first stands (and only it
          // consumed mail; this attempt rolled back).
          const recorded = isDuplicateKey(err) ? await recordedOutcome(db, request) : undefined;
          if (!recorded) throw err;
          return recorded;
        });
        registered = register;
        return outcome;
      },
    });
    settled = true;
    return outcome;
  } finally {
    leaveSweep();
    offListening();
    unsubscribe();
    // Left by an abort or an error: no send should hand mail to this wait any more. If this
    // fails, the key still admits one result, and a takeover's lease never matches this one.
    if (registered && !settled) void unregister(db, request.agentId, key!).catch(() => {});
  }
}

async function unregister(db: Db, agentId: string, key: string): Promise<void> {
  await db.execute(
    sql`update mail_waits set key = null where agent_id = ${agentId} and key = ${key}`,
  );
}

async function assertAgentsExist(db: Db, ids: string[]): Promise<void> {
  const malformed = ids.filter((id) => !isUuid(id));
  if (malformed.length) {
    throw new AgentError("UNKNOWN_AGENT", `unknown agent(s): ${malformed.join(", ")}`);
  }
  const found = await db.execute<{ id: string }>(
    sql`select id from agents where id = any(${sql.param(ids)}::uuid[])`,
  );
  const known = new Set(found.rows.map((r) => r.id));
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length)
    throw new AgentError("UNKNOWN_AGENT", `unknown agent(s): ${missing.join(", ")}`);
}

function recordSpec(request: WaitRequest) {
  return {
    kind: request.record?.kind ?? "mail_in",
    data: JSON.stringify(request.record?.data ?? {}),
    key: request.record?.key ?? null,
    epoch: request.fence?.epoch ?? null,
  };
}

/** The outcome this wait's call recorded already, if it did (see WaitRequest.record). */
async function recordedOutcome(db: Db, request: WaitRequest): Promise<WaitOutcome | undefined> {
  const key = request.record?.key;
  if (!key) return undefined;
  const row = await recordedEvent(db, request.agentId, key);
  return row ? recordedAs(row) : undefined;
}

/** A recorded result event as the outcome of the wait that it answered. */
function recordedAs(row: {
  id: number | string;
  content: string;
  data: Record<string, unknown> | null;
}): WaitOutcome {
  const mailIds = (row.data?.mail_ids as number[] | undefined) ?? [];
  return {
    result: JSON.parse(row.content) as WaitResult,
    eventId: Number(row.id),
    consumedMailIds: mailIds.map(Number),
  };
}

/**
 * Takes the oldest unconsumed mail and records the receiving event in one prepared statement.
 * Its commit is asynchronous (no wait for the WAL flush): a crash can lose it only together with
 * everything after it, since any later commit flushes the WAL up to it — so the mail is then simply
 * unconsumed again, with no event that saw it. Never lost, never delivered twice.
 *
 * A keyed wait ($5) first looks for its own result (`d`: a send handed it mail, handoff.ts) and
 * returns that instead. Finding neither, and asked to ($7: it is about to block), it registers in
 * mail_waits so the next send hands it the mail; every other outcome takes its registration out.
 */
const TAKE_NEXT: Prepared = {
  name: "warren_take_next_mail",
  text: `
    with c as (
      select set_config('synchronous_commit', 'off', true)
    ), l as (
      select $4::text is null
             or (lease_owner is not distinct from $4::text and lease_epoch = $6::bigint) as held,
             tree_id
        from agents where id = $1::uuid
         for key share
    ), d as (
      select id, content, data from events where agent_id = $1::uuid and key = $5::text
    ), m as (
      select id, from_id, body, final, result from mail
       where to_id = $1::uuid and consumed_at is null and kind = 'mail'
         and (select held from l) and not exists (select 1 from d)
       order by id limit 1
       for update skip locked
    ), f as (
      select m.id, m.from_id, m.body, m.final, m.result,
             coalesce(a.name, '${PERSON}') as from_name
        from m left join agents a on a.id = m.from_id
    ), g as (
      update mail_waits set key = null
       where agent_id = $1::uuid and key = $5::text
         and (not $7::boolean or exists (select 1 from f) or exists (select 1 from d))
      returning 1
    ), e as (
      -- After g (which waits for a send handing mail to this wait): that send's result is then
      -- committed, and this insert is refused by the key instead of waiting for it.
      insert into events (agent_id, tree_id, kind, content, data, key, epoch)
      select $1::uuid, (select tree_id from l), $2::text,
             ${mailResultSql({
               from: `coalesce(f.from_id::text, '${PERSON}')`,
               fromName: "f.from_name",
               body: "f.body",
               final: "f.final",
               result: "f.result",
             })},
             $3::jsonb || jsonb_build_object('mail_ids', jsonb_build_array(f.id)),
             $5::text, $6::bigint
        from f
       where (select count(*) from g) >= 0
      returning id, content
    ), u as (
      update mail set consumed_at = now(), consumed_by_event = (select id from e)
       where id = (select id from f)
      returning id
    ), k as (
      update agents set tool_calls = tool_calls + 1, last_activity_at = now()
       where id = $1::uuid and $2::text = 'tool_result' and exists (select 1 from e)
    ), r as (
      insert into mail_waits (agent_id, tree_id, key, kind, data, lease_owner, epoch)
      select $1::uuid, l.tree_id, $5::text, $2::text, $3::jsonb, $4::text, $6::bigint from l
       where $7::boolean and $5::text is not null and l.held
         and not exists (select 1 from f) and not exists (select 1 from d)
      on conflict (agent_id) do update
        set key = excluded.key, kind = excluded.kind, data = excluded.data,
            lease_owner = excluded.lease_owner, epoch = excluded.epoch, registered_at = now()
    )
    select coalesce((select held from l), false) as held, f.id as mail_id, f.from_id,
           f.from_name, f.body, (select id from e) as event_id,
           (select content from e) as event_content,
           (select id from d) as done_id, (select content from d) as done_content,
           (select data from d) as done_data
      from c left join f on exists (select 1 from u)`,
};

async function attemptNext(
  db: Db,
  request: WaitRequest,
  final: boolean,
  register: boolean,
): Promise<WaitOutcome | undefined> {
  const { kind, data, key, epoch } = recordSpec(request);
  const [row] = await runPrepared<{
    held: boolean;
    mail_id: string | null;
    from_id: string | null;
    from_name: string;
    body: string;
    event_id: string;
    event_content: string;
    done_id: string | null;
    done_content: string | null;
    done_data: Record<string, unknown> | null;
  }>(db, TAKE_NEXT, [
    request.agentId,
    kind,
    data,
    request.fence?.owner ?? null,
    key,
    epoch,
    register && !final,
  ]);
  if (!row?.held) throw new LeaseLost(request.agentId);
  if (row.done_id !== null) {
    return recordedAs({ id: row.done_id, content: row.done_content!, data: row.done_data });
  }
  if (row.mail_id !== null) {
    return {
      // As recorded (with `final` and `result` when the mail has them: mailResultSql).
      result: JSON.parse(row.event_content) as NextMail,
      eventId: Number(row.event_id),
      consumedMailIds: [Number(row.mail_id)],
    };
  }
  if (!final) return undefined;
  const result: WaitTimeout = { status: "timeout" };
  const eventId = await db.transaction(async (tx) => {
    await fence(tx, request);
    return insertResultEvent(tx, request, result, []);
  });
  return { result, eventId, consumedMailIds: [] };
}

/** A leased wait writes only while its worker holds the lease (its row locked first). */
async function fence(tx: Queryable, request: WaitRequest): Promise<void> {
  if (request.fence !== undefined) await assertLease(tx, request.agentId, request.fence);
}

async function insertResultEvent(
  q: Pick<Db, "execute">,
  request: WaitRequest,
  result: WaitResult,
  mailIds: number[],
): Promise<number> {
  const { kind, data, key, epoch } = recordSpec(request);
  const inserted = await q.execute<{ id: string }>(sql`
    insert into events (agent_id, kind, content, data, key, epoch)
    values (${request.agentId}, ${kind}, ${JSON.stringify(result)},
            ${data}::jsonb || jsonb_build_object('mail_ids', ${JSON.stringify(mailIds)}::jsonb),
            ${key}, ${epoch})
    returning id`);
  if (kind === "tool_result") await countToolCall(q, request.agentId, epoch ?? undefined);
  return Number(inserted.rows[0]!.id);
}

/**
 * A look at a fan-in without a transaction, in one statement: the lease, then each awaited agent's
 * state and whether mail from it waits. Most checks find some still running and end here; only a
 * settled look (or the deadline) goes on to the transaction that takes the mail. Asked to ($5),
 * while some still run it also stores the per-agent state as the waiter's wait_status when that
 * changed (the only lock it takes; the epoch fences it as setActivity's).
 */
const FAN_IN_LOOK: Prepared = {
  name: "warren_fan_in_look",
  text: `
    with held as (
      select $3::text is null
             or exists (select 1 from agents where id = $1::uuid and lease_owner = $3::text
                           and lease_epoch = $4::bigint) as held
    ), look as (
      select t.ord, a.id, a.name, a.state, a.failure, m.id is not null as mailed
        from unnest($2::uuid[]) with ordinality as t(id, ord)
        join agents a on a.id = t.id
        left join lateral (
          select id from mail
           where to_id = $1::uuid and from_id = t.id and consumed_at is null and kind = 'mail'
           order by id limit 1
        ) m on true
    ), status as (
      select jsonb_agg(jsonb_build_object(
               'agent_id', id, 'name', name,
               'status', case when mailed then 'received' when state = 'dead' then 'dead'
                              when state = 'idle' and failure is not null then 'failed'
                              when state = 'idle' then 'idle' else 'running' end)
             order by ord) as value
        from look
       where $5::boolean and (select held from held)
         and exists (select 1 from look where not mailed and state not in ('dead', 'idle'))
    ), stored as (
      update agents set wait_status = (select value from status),
                        lease_epoch = coalesce($4::bigint, lease_epoch)
       where id = $1::uuid and exists (select 1 from status where value is not null)
         and wait_status is distinct from (select value from status)
      returning 1
    )
    select (select held from held) as held,
           -- Arrays in the listed order, not JSON objects: building 100 objects a look cost
           -- more than the look (the status above is built only when asked for).
           coalesce(array_agg(id order by ord), '{}') as ids,
           coalesce(array_agg(name order by ord), '{}') as names,
           coalesce(array_agg(state order by ord), '{}') as states,
           coalesce(array_agg(failure is not null order by ord), '{}') as failed,
           coalesce(array_agg(mailed order by ord), '{}') as mailed,
           -- Written now or already so: either way the row holds it.
           (select value is not null from status) as stored
      from look`,
};

/** One check of a fan-in: returns when every agent is received, idle or dead (or at the deadline). */
async function attemptFanIn(
  db: Db,
  request: WaitRequest,
  fromAgents: string[],
  final: boolean,
): Promise<WaitOutcome | undefined> {
  if (!final) {
    const [look] = await runPrepared<{
      held: boolean | null;
      ids: string[];
      names: string[];
      states: string[];
      failed: boolean[];
      mailed: boolean[];
      stored: boolean;
    }>(db, FAN_IN_LOOK, [
      request.agentId,
      fromAgents,
      request.fence?.owner ?? null,
      request.fence?.epoch ?? null,
      request.storeStatus === true,
    ]);
    if (look?.held !== true) throw new LeaseLost(request.agentId);
    const statuses = look.states.map((state, i) =>
      look.mailed[i] ? ("received" as const) : fanInStatus(state, look.failed[i]!),
    );
    if (statuses.includes("running")) {
      request.onProgress?.(
        statuses.map((status, i) => ({ agent_id: look.ids[i]!, name: look.names[i]!, status })),
        look.stored,
      );
      return undefined;
    }
  }
  return db.transaction(async (tx) => {
    await fence(tx, request);
    const rows = await tx.execute<{
      id: string;
      name: string;
      state: string;
      mail_id: string | null;
      body: string | null;
      failure: string | null;
      worktree: WorktreeInfo | null;
      final: boolean | null;
      result: unknown;
      has_result: boolean | null;
    }>(sql`
      select a.id, a.name, a.state, a.failure, m.id as mail_id, m.body, m.final, a.worktree,
             m.result, m.result is not null as has_result
        from unnest(${sql.param(fromAgents)}::uuid[]) with ordinality as t(id, ord)
        join agents a on a.id = t.id
        left join lateral (
          select id, body, final, result from mail
           where to_id = ${request.agentId} and from_id = t.id and consumed_at is null
             and kind = 'mail'
           order by id limit 1
           for update skip locked
        ) m on true
       order by t.ord`);
    const entries: FanInEntry[] = rows.rows.map((r) => {
      if (r.mail_id !== null) {
        const message = r.body ?? "";
        return {
          agent_id: r.id,
          name: r.name,
          status: "received",
          message,
          ...(r.final ? { final: true } : {}),
          // Parsed when it was sent (send, mail/final-answer.ts): the value a program reads.
          ...(r.has_result ? { result: r.result } : {}),
        };
      }
      const status = fanInStatus(r.state, r.failure !== null);
      return status === "failed"
        ? { agent_id: r.id, name: r.name, status, error: r.failure! }
        : { agent_id: r.id, name: r.name, status };
    });
    request.onProgress?.(entries, false);
    const settled = entries.every((e) => e.status !== "running");
    if (!settled && !final) return undefined;
    const mailIds = rows.rows.filter((r) => r.mail_id !== null).map((r) => Number(r.mail_id));
    // An isolated child's entry says what it changed (issue 30): worked out now, once, and
    // recorded with the result (a retried wait returns the same).
    await Promise.all(
      rows.rows.map(async (r, i) => {
        if (!r.worktree || r.worktree.removed) return;
        const changes = await changesOf(r.worktree).catch(() => null);
        if (changes) entries[i]!.changes = changes;
      }),
    );
    const result = { results: entries };
    const eventId = await insertResultEvent(tx, request, result, mailIds);
    if (mailIds.length) {
      await tx.execute(sql`
        update mail set consumed_at = now(), consumed_by_event = ${eventId}
         where id = any(${sql.param(mailIds)}::bigint[])`);
    }
    return { result, eventId, consumedMailIds: mailIds };
  });
}

/**
 * An awaited agent without mail for the waiter: settled when it is dead or idle — `failed` when
 * idle after a turn that failed (`failure` set), never `idle` then.
 */
function fanInStatus(state: string, failed: boolean): FanInStatus {
  if (state === "dead") return "dead";
  if (state !== "idle") return "running";
  return failed ? "failed" : "idle";
}
