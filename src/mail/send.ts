// send: one statement inserts the mail, wakes an idle recipient and NOTIFYs, all atomically.
import type { Db } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import { AgentError } from "../agents/errors.js";
import { isUuid } from "../agents/refs.js";
import { DEFAULT_LIMITS } from "../agents/limits.js";
import { validateText } from "../agents/text.js";
import { mailCtes } from "./handoff.js";

export interface SendRequest {
  treeId: string;
  /** null = the person at the keyboard. */
  fromId: string | null;
  toId: string;
  body: unknown;
  maxBytes?: number;
}

export interface SendReceipt {
  mailId: number;
  /** The recipient was idle and now has a turn to run. */
  woke: boolean;
  /** A wait of the recipient's, blocked for mail, received it as its result (handoff.ts). */
  handed: boolean;
}

export function validateBody(body: unknown, maxBytes = DEFAULT_LIMITS.maxMessageBytes): string {
  if (typeof body !== "string") throw new AgentError("INVALID_ARGS", "message must be a string");
  if (!body.trim()) throw new AgentError("INVALID_ARGS", "message is empty");
  validateText(body, "message");
  const bytes = Buffer.byteLength(body, "utf8");
  if (bytes > maxBytes) {
    throw new AgentError(
      "LIMIT_EXCEEDED",
      `message is ${bytes} bytes; the limit is ${maxBytes} bytes (${Math.round(maxBytes / 1024)} KiB)`,
    );
  }
  return body;
}

// `for key share` orders a send against its recipient going idle (takePendingMail holds `for
// update`, which conflicts; other senders do not): either that sees this mail, or this reads the
// committed `idle` (a locking read returns the newest row version) and wakes it. `w` tests the
// recipient's state because its own scan would test the statement's snapshot, which may predate
// that `idle`. A single statement is its own transaction: the row, its handing over to a blocked
// wait (handoff.ts), the wake-up and the NOTIFYs commit together.
const SEND: Prepared = {
  name: "warren_send_mail",
  text: `
    with recipient as (
      select id, tree_id, state, lease_owner, lease_epoch from agents
       where id = $1::uuid
         for key share
    ),${mailCtes({
      to: "$1::uuid",
      from: "$2::uuid",
      body: "$3::text",
      may: "(select tree_id = $4::uuid and state <> 'dead' from recipient)",
      lockSender: false,
    })}
    select exists (select 1 from recipient) as found,
           (select tree_id = $4::uuid from recipient) as same_tree,
           (select id from m) as mail_id,
           exists (select 1 from w) as woke,
           exists (select 1 from he) as handed,
           (select count(*) from told)::int as notified`,
};

export async function sendMail(db: Db, request: SendRequest): Promise<SendReceipt> {
  const body = validateBody(request.body, request.maxBytes);
  if (!isUuid(request.toId)) throw new AgentError("UNKNOWN_AGENT", `no agent ${request.toId}`);
  const [row] = await runPrepared<{
    found: boolean;
    same_tree: boolean | null;
    mail_id: string | null;
    woke: boolean;
    handed: boolean;
  }>(db, SEND, [request.toId, request.fromId, body, request.treeId]);
  if (!row?.found || !row.same_tree) {
    throw new AgentError("UNKNOWN_AGENT", `no agent ${request.toId} in this tree`);
  }
  if (row.mail_id === null) throw new AgentError("AGENT_DEAD", `agent ${request.toId} is dead`);
  return { mailId: Number(row.mail_id), woke: row.woke, handed: row.handed };
}
