// An agent's send in one statement (its own implicit transaction, or the caller's): both ends
// locked in lock order, the sender's lease checked, the mail inserted, an idle recipient woken and
// NOTIFYs sent on commit; with `record`, also the call's keyed `tool_result` and its count
// (tools/effects.ts), so the effect and its result commit together or not at all.
import { AgentError, LeaseLost } from "../agents/errors.js";
import type { ResultStamp } from "../agents/event-keys.js";
import { countedCte } from "../agents/events.js";
import { LOCK_ORDER_TEXT } from "../agents/lock-order.js";
import { isUuid } from "../agents/refs.js";
import type { Queryable } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import { mailCtes } from "./handoff.js";
import { validateBody, type SendReceipt, type SendRequest } from "./send.js";

export interface FencedReceipt extends SendReceipt {
  toName: string;
  /** The `tool_result` event, with `record`. */
  eventId?: number;
  /** Its content, with `record`: what the model reads. */
  content?: string;
}

type SendRow = {
  to_tree: string | null;
  to_state: string | null;
  to_name: string | null;
  lease_held: boolean;
  mail_id: string | null;
  woke: boolean;
  handed: boolean;
  event_id: string | null;
  content: string | null;
};

/** What a child's mail to its parent says of itself (see mail.final and mail.result). */
export interface MailMarks {
  /** The child's final answer: its `send {final: true}` to its parent. */
  final?: boolean;
  /** The message parsed under the child's output schema, which accepted it. */
  result?: { value: unknown };
}

export async function sendMailIn(
  q: Queryable,
  request: SendRequest & { leaseOwner?: string } & MailMarks & {
      /** The sending span's traceparent, kept with the mail (telemetry on: a span link). */
      traceContext?: string;
    },
  record?: ResultStamp,
): Promise<FencedReceipt> {
  const body = validateBody(request.body, request.maxBytes);
  if (!isUuid(request.toId)) throw new AgentError("UNKNOWN_AGENT", `no agent ${request.toId}`);
  const values = [
    request.fromId,
    request.toId,
    request.treeId,
    request.leaseOwner ?? null,
    body,
    request.final === true,
    request.result === undefined ? null : JSON.stringify(request.result.value),
    ...(record
      ? [
          record.key,
          record.epoch,
          JSON.stringify({ tool_call_id: record.toolCallId, name: "send" }),
        ]
      : []),
    request.traceContext ?? null,
  ];
  const [row] = await runPrepared<SendRow>(q, record ? SEND_RECORDED : SEND, values);
  if (row?.lease_held === false) throw new LeaseLost(request.fromId!);
  if (!row?.to_tree || row.to_tree !== request.treeId) {
    throw new AgentError("UNKNOWN_AGENT", `no agent ${request.toId} in this tree`);
  }
  if (row.to_state === "dead" || row.mail_id === null) {
    throw new AgentError("AGENT_DEAD", `${row.to_name} (${request.toId.slice(0, 8)}) is dead`);
  }
  return {
    mailId: Number(row.mail_id),
    woke: row.woke,
    handed: row.handed,
    toName: row.to_name!,
    ...(row.event_id === null ? {} : { eventId: Number(row.event_id), content: row.content! }),
  };
}

/**
 * $1 sender (null: the person), $2 recipient, $3 tree, $4 the sender's lease owner (null: not
 * checked), $5 body, $6 final, $7 result (JSON text or null); with a record, $8 its key, $9 the
 * epoch, $10 its data; last, the sending span's traceparent (null: telemetry off). `key share` on
 * both rows: it conflicts with the end of the recipient's turn
 * (`for update`, takePendingMail), so either that sees this mail or this sees its committed `idle`
 * and wakes it, and with a takeover's claim on the sender; not with other sends, so a fan-in's
 * children report to their parent at once. The rows are read as locked (a statement that waited
 * for a lock re-reads the rows it locked), so the state and lease checked are the current ones.
 */
const sendText = (record: boolean) => `
  with locked as (
    select id, tree_id, name, state, lease_owner, lease_epoch from agents
     where id = any(array_remove(array[$1::uuid, $2::uuid], null))
     order by ${LOCK_ORDER_TEXT}
     for key share
  ), recipient as (
    select id, tree_id, name, state, lease_owner, lease_epoch from locked where id = $2::uuid
  ), held as (
    select $4::text is null or $1::uuid is null
           or exists (select 1 from locked where id = $1::uuid and lease_owner = $4::text) as ok
  ),${mailCtes({
    to: "$2::uuid",
    from: "$1::uuid",
    body: "$5::text",
    may: "(select tree_id = $3::uuid and state <> 'dead' from recipient) and (select ok from held)",
    lockSender: record,
    final: "$6::boolean",
    result: "$7::jsonb",
    traceContext: record ? "$11::text" : "$8::text",
  })}${
    record
      ? `, ${countedCte("$1", "$9", "exists (select 1 from m)")}, result as (
    -- The same text as JSON.stringify({status, to, to_name, mail_id}).
    insert into events (agent_id, tree_id, kind, content, data, key, epoch)
    select $1::uuid, $3::uuid, 'tool_result',
           '{"status":"sent","to":' || to_json(r.id::text)::text
             || ',"to_name":' || to_json(r.name)::text || ',"mail_id":' || m.id::text || '}',
           $10::jsonb, $8::text, $9::bigint
      from m, recipient r
    returning id, content
  )`
      : ""
  }
  select (select tree_id from recipient) as to_tree, (select state from recipient) as to_state,
         (select name from recipient) as to_name, (select ok from held) as lease_held,
         (select id from m) as mail_id, exists (select 1 from w) as woke,
         exists (select 1 from he) as handed,
         ${record ? "(select id from result)" : "null::bigint"} as event_id,
         ${record ? "(select content from result)" : "null::text"} as content,
         (select count(*) from told) as told`;

const SEND: Prepared = { name: "warren_send", text: sendText(false) };
const SEND_RECORDED: Prepared = { name: "warren_send_recorded", text: sendText(true) };
