// Mail handed to a blocked wait in the send's own statement (issue 15: wake). A `wait` for the
// oldest mail that finds none registers in mail_waits before it blocks (wait.ts, TAKE_NEXT); a
// send to its agent then inserts the mail already consumed, records the wait's result as the wait
// would (same kind, data, content and key, stamped with its lease epoch) and NOTIFYs that result
// on the agent's channel, so the waiter returns on the notification without another round trip.
//
// Exactly once by construction, not by care: the result carries the wait call's key, and
// events_key_idx admits one result per key, whoever writes it. A wait that took other mail, timed
// out or was answered meanwhile has its result recorded already: the handoff's insert then does
// nothing (ON CONFLICT), the mail goes in unconsumed like any other, and the waiter's own attempt,
// had it lost that race, is refused by the same index and returns the recorded result. A mail is
// consumed only in the statement that records the event receiving it. A handoff needs the wait's
// lease to be the agent's current one (the recipient's row is locked `for key share`, which a
// claim's `for update` waits for), and the fencing trigger checks the epoch again on insert.
//
// It never waits for a lock: the registration and the recipient's row (for the result's call
// count) are taken with SKIP LOCKED, and whoever holds either is mid-way through its own write;
// the mail is then sent as usual and that writer, or the wait's next look, takes it.
import { countedCte } from "../agents/events.js";
import { PERSON } from "../llm/framing.js";
import { agentChannel, WORK_CHANNEL } from "../bus/channels.js";

/** A NOTIFY payload carries a handed result up to this size; a larger one is read by its key. */
export const HANDOFF_RESULT_BYTES = 4_000;

export interface HandoffSql {
  /** The recipient's id, the sender's (null: the person) and the body, as SQL expressions. */
  to: string;
  from: string;
  body: string;
  /** Whether the mail goes in at all (a living recipient in the sender's tree, a held lease). */
  may: string;
  /**
   * The statement also updates the sender's own row (it records the send's result): that row is
   * locked before the recipient's, so two agents handing mail to each other cannot deadlock.
   */
  lockSender: boolean;
  /** SQL boolean: the mail is a child's final answer (mail.final); false when absent. */
  final?: string;
  /** SQL jsonb: the message parsed under the sender's output schema (mail.result); else null. */
  result?: string;
  /** SQL text: the sending span's traceparent (mail.trace_context); null when absent. */
  traceContext?: string;
}

/**
 * The text of mail as a `wait` for the oldest mail returns it (SQL, from SQL expressions):
 * `{from, from_name, message}`, then `"final": true` for a child's final answer and `result` (the
 * parsed value) when its output schema accepted it — the same fields as a fan-in's entry. Built as
 * text: json has no operator to add a key, and jsonb would reorder the keys the model reads.
 */
export function mailResultSql(m: {
  from: string;
  fromName: string;
  body: string;
  final: string;
  result: string;
}): string {
  return `(left(json_build_object('from', ${m.from}, 'from_name', ${m.fromName},
                                 'message', ${m.body})::text, -1)
           || case when ${m.final} then ', "final" : true' else '' end
           || coalesce(', "result" : ' || (${m.result})::text, '') || '}')`;
}

/**
 * The CTEs that insert the mail (`m`), hand it to a registered wait (`he`: the recorded result),
 * wake an idle recipient (`w`) and NOTIFY (`told`). The statement must define `recipient` (the
 * recipient's row locked `for key share`: id, tree_id, state, lease_owner, lease_epoch).
 */
export function mailCtes(p: HandoffSql): string {
  return `
  hw as (
    select w.key, w.kind, w.data, w.epoch from mail_waits w, recipient r
     where w.agent_id = ${p.to} and w.key is not null and ${p.may}
       and w.lease_owner is not distinct from r.lease_owner
       and (w.epoch is null or w.epoch = r.lease_epoch)
       for update of w skip locked
  ),${
    p.lockSender
      ? `
  hs as (
    select id from agents where id = ${p.from} and exists (select 1 from hw)
       for no key update
  ),`
      : ""
  }
  hb as (
    select id from agents
     where id = ${p.to} and exists (select 1 from hw)${
       p.lockSender ? ` and (${p.from} is null or exists (select 1 from hs))` : ""
     }
       for no key update skip locked
  ), hm as (
    select nextval('mail_id_seq') as id
  ), he as (
    insert into events (agent_id, tree_id, kind, content, data, key, epoch)
    select ${p.to}, r.tree_id, hw.kind,
           ${mailResultSql({
             from: `coalesce(${p.from}::text, '${PERSON}')`,
             fromName: `coalesce((select name from agents where id = ${p.from}), '${PERSON}')`,
             body: p.body,
             final: p.final ?? "false",
             result: p.result ?? "null::jsonb",
           })},
           hw.data || jsonb_build_object('mail_ids', jsonb_build_array(hm.id)), hw.key, hw.epoch
      from hw, hb, hm, recipient r
    on conflict (agent_id, key) where key is not null do nothing
    returning id, content
  ), ${countedCte(
    p.to,
    "(select epoch from hw)",
    "exists (select 1 from he) and (select kind from hw) = 'tool_result'",
    "hk",
  )}, hg as (
    update mail_waits w set key = null from hw
     where w.agent_id = ${p.to} and w.key = hw.key and exists (select 1 from hb)
    returning 1
  ), m as (
    insert into mail (id, tree_id, from_id, to_id, body, consumed_at, consumed_by_event, final,
                      result, trace_context)
    select (select id from hm), r.tree_id, ${p.from}, r.id, ${p.body},
           (select now() from he), (select id from he), ${p.final ?? "false"},
           ${p.result ?? "null::jsonb"}, ${p.traceContext ?? "null"}
      from recipient r
     where ${p.may}
    returning id
  ), w as (
    update agents set state = 'running', last_activity_at = now()
     where id = ${p.to} and exists (select 1 from m) and not exists (select 1 from he)
       and (select state from recipient) = 'idle'
    returning id
  ), told as (
    select pg_notify('${agentChannel("")}' || ${p.to}::text, coalesce(
             (select json_build_object(
                       'key', hw.key, 'event', he.id, 'mail', m.id,
                       'result', case when octet_length(he.content) <= ${HANDOFF_RESULT_BYTES}
                                      then he.content::json end)::text
                from he, hw),
             'mail')),
           (select pg_notify('${WORK_CHANNEL}', ${p.to}::text) from w)
      from m
  )`;
}

/** A NOTIFY payload of a result recorded for a blocked call by someone else (a send, a task_add). */
export interface HandedResult {
  /** The blocked call's event key. */
  key: string;
  event: number;
  /** The result as recorded; absent when it was too large for the payload (read it by key). */
  result?: unknown;
}

/** A NOTIFY payload of mail handed to a wait: the result, and the mail it consumed. */
export interface Handed extends HandedResult {
  mail: number;
}

/** The handed result in a NOTIFY payload, or undefined for an ordinary hint such as "mail". */
export function parseHandedResult(payload: string): HandedResult | undefined {
  return readHanded(payload)?.handed;
}

export function parseHanded(payload: string): Handed | undefined {
  const read = readHanded(payload);
  return read && { ...read.handed, mail: Number(read.fields.mail) };
}

function readHanded(
  payload: string,
): { handed: HandedResult; fields: Record<string, unknown> } | undefined {
  if (!payload.startsWith("{")) return undefined;
  try {
    const fields = JSON.parse(payload) as Record<string, unknown> | null;
    if (typeof fields?.key !== "string" || typeof fields.event !== "number") return undefined;
    const handed: HandedResult = {
      key: fields.key,
      event: fields.event,
      ...(fields.result == null ? {} : { result: fields.result }),
    };
    return { handed, fields };
  } catch {
    return undefined;
  }
}
