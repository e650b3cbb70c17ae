// A child's final answer mailed for it (issue 42): a turn of a child the `fork` tool made that
// was started by its task or its parent's mail, and that ends with text but no mail to the
// parent, has that text mailed to the parent, marked final — so a model that answers instead of
// calling `send` loses nothing, and its result costs one model request.
//
// Exactly once by construction: the statement records a `mail_out` event on the child keyed by
// the answer (`final:<answer id>`) together with the mail, and inserts the mail only when that
// key is absent; a retry after a lost reply, or a worker resuming the turn after a crash, finds
// the key and mails nothing more. It runs before the turn's end lets the agent go idle, under the
// child's lease (checked here, and the event's epoch by the fencing trigger), so a crash between
// the answer and the mail leaves the turn to be ended — and the mail sent — by the next worker.
import { LeaseLost } from "../agents/errors.js";
import { LOCK_ORDER_TEXT } from "../agents/lock-order.js";
import type { Queryable } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import { mailCtes } from "./handoff.js";

/** The key of the `mail_out` event recording the final answer of `answerId`. */
export function finalAnswerKey(answerId: number): string {
  return `final:${answerId}`;
}

/** What the end of a child's turn found (see mailFinalAnswer). */
export interface FinalAnswer {
  /** This call mailed the answer. */
  mailed: boolean;
  /** The turn owed the parent a result: started by the task or the parent's mail. */
  owed: boolean;
  /** A `send` to the parent succeeded in the turn (the result went already). */
  sent: boolean;
  /** The turn was reminded once already of its missing result (output schema). */
  reminded: boolean;
}

/**
 * Mails the text of answer `answerId` (an `assistant` event of `agentId` that ended its turn) to
 * the agent's parent when it is due and `valid` (the text matches the child's output schema, or
 * it has none). Throws LeaseLost when `fence` no longer holds the agent.
 */
export async function mailFinalAnswer(
  q: Queryable,
  agentId: string,
  answerId: number,
  valid: boolean,
  fence?: { owner: string; epoch: number },
  result?: { value: unknown },
  /** The span of the run that answered, kept with the mail (telemetry on: a span link). */
  traceContext?: string,
): Promise<FinalAnswer> {
  const [row] = await runPrepared<{
    held: boolean;
    mail_id: string | null;
    owed: boolean;
    sent: boolean;
    reminded: boolean;
  }>(q, MAIL_FINAL, [
    agentId,
    answerId,
    finalAnswerKey(answerId),
    fence?.epoch ?? null,
    fence?.owner ?? null,
    valid,
    result === undefined ? null : JSON.stringify(result.value),
    traceContext ?? null,
  ]);
  if (row && !row.held) throw new LeaseLost(agentId);
  return {
    mailed: row?.mail_id !== null && row?.mail_id !== undefined,
    owed: row?.owed === true,
    sent: row?.sent === true,
    reminded: row?.reminded === true,
  };
}

/**
 * $1 the child, $2 its answer, $3 the key, $4 the epoch, $5 the lease owner (null: unchecked),
 * $6 whether the text is a valid result (always, without an output schema), $7 its parsed
 * value as JSON text (null without an output schema), $8 the answering run's traceparent (null:
 * telemetry off).
 * Due when: the child reports to its parent (caps.reports: the fork tool made it); the answer has
 * text (a valid one); the turn was started by the child's task (its first `user` event) or by its parent's
 * mail; no `send` to the parent succeeded in that turn; and the key is not recorded yet.
 */
const MAIL_FINAL: Prepared = {
  name: "warren_mail_final",
  text: `
  with me as (
    select id, tree_id, parent_id, caps from agents where id = $1::uuid
  ), answer as (
    select id, content from events
     where id = $2::bigint and agent_id = $1::uuid and kind = 'assistant'
  ), start as (
    select e.id, e.kind, e.data,
           e.id = (select min(id) from events where agent_id = $1::uuid and kind = 'user') as task
      from events e
     where e.agent_id = $1::uuid and e.id < $2::bigint and e.kind in ('user', 'mail_in')
       -- A reminder of a missing result (runtime) goes on the turn it reminds.
       and not coalesce(e.kind = 'user' and e.data ? 'reminder', false)
     order by e.id desc limit 1
  ), turn as (
    select coalesce((select (caps ->> 'reports') = 'true' from me), false)
       and coalesce((select (kind = 'user' and task)
                            or (kind = 'mail_in' and data ->> 'from' = (select parent_id::text from me))
                       from start), false) as owed,
       exists (
             select 1 from events t
              where t.agent_id = $1::uuid and t.id > (select id from start) and t.id < $2::bigint
                and t.kind = 'tool_result' and t.data ->> 'name' = 'send'
                and t.content like '{"status":"sent",%'
                and (t.content::jsonb) ->> 'to' = (select parent_id::text from me)) as sent,
       exists (
             select 1 from events t
              where t.agent_id = $1::uuid and t.id > (select id from start) and t.id < $2::bigint
                and t.kind = 'user' and t.data ? 'reminder') as reminded
  ), due as (
    select (select owed and not sent from turn) and $6::boolean
       and coalesce((select btrim(content) <> '' from answer), false)
       and not exists (select 1 from events where agent_id = $1::uuid and key = $3::text) as ok
  ), locked as (
    select id, tree_id, name, state, lease_owner, lease_epoch from agents
     where id in ($1::uuid, (select parent_id from me)) and (select ok from due)
     order by ${LOCK_ORDER_TEXT}
     for key share
  ), recipient as (
    select id, tree_id, name, state, lease_owner, lease_epoch from locked
     where id = (select parent_id from me)
  ), held as (
    select $5::text is null or not (select ok from due)
           or exists (select 1 from locked where id = $1::uuid and lease_owner = $5::text) as ok
  ),${mailCtes({
    to: "(select parent_id from me)",
    from: "$1::uuid",
    body: "(select content from answer)",
    may:
      "(select ok from due) and (select ok from held)" +
      " and (select tree_id = (select tree_id from me) and state <> 'dead' from recipient)",
    lockSender: false,
    final: "true",
    result: "$7::jsonb",
    traceContext: "$8::text",
  })}, mailed as (
    insert into events (agent_id, tree_id, kind, content, data, key, epoch)
    select $1::uuid, r.tree_id, 'mail_out', 'final answer mailed to ' || r.name,
           jsonb_build_object('to', r.id, 'to_name', r.name, 'message', (select content from answer),
                              'mail_id', m.id, 'final', true),
           $3::text, $4::bigint
      from m, recipient r
    returning id
  )
  select (select ok from held) as held, (select id from m) as mail_id,
         (select owed from turn) as owed, (select sent from turn) as sent,
         (select reminded from turn) as reminded,
         (select count(*) from mailed) as recorded, (select count(*) from told) as told`,
};
