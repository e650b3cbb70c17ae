// send: one statement inserts the mail, wakes an idle recipient and NOTIFYs, all atomically.
import { sql } from "drizzle-orm";
import type { Queryable } from "../db/client.js";
import { AgentError } from "../agents/errors.js";
import { DEFAULT_LIMITS } from "../agents/limits.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
}

export function validateBody(body: unknown, maxBytes = DEFAULT_LIMITS.maxMessageBytes): string {
  if (typeof body !== "string") throw new AgentError("INVALID_ARGS", "message must be a string");
  if (!body.trim()) throw new AgentError("INVALID_ARGS", "message is empty");
  const bytes = Buffer.byteLength(body, "utf8");
  if (bytes > maxBytes) {
    throw new AgentError(
      "LIMIT_EXCEEDED",
      `message is ${bytes} bytes; the limit is ${maxBytes} bytes (${Math.round(maxBytes / 1024)} KiB)`,
    );
  }
  return body;
}

export async function sendMail(q: Queryable, request: SendRequest): Promise<SendReceipt> {
  const body = validateBody(request.body, request.maxBytes);
  if (!UUID.test(request.toId)) throw new AgentError("UNKNOWN_AGENT", `no agent ${request.toId}`);
  // A single statement is its own transaction: the row, the wake-up and the NOTIFYs commit together.
  // `for key share` orders it against a recipient going idle (takePendingMail holds `for update`,
  // which conflicts; other senders do not): either that sees this mail, or this reads the committed
  // `idle` (a locking read returns the newest row version) and wakes it. `w` tests r's state
  // because its own scan would test the statement's snapshot, which may predate that `idle`.
  const result = await q.execute<{
    found: boolean;
    state: string | null;
    same_tree: boolean | null;
    mail_id: string | null;
    woke: boolean;
    notified: number;
  }>(sql`
    with r as (
      select id, tree_id, state from agents where id = ${request.toId} for key share
    ), m as (
      insert into mail (tree_id, from_id, to_id, body)
      select r.tree_id, ${request.fromId}, r.id, ${body} from r
       where r.tree_id = ${request.treeId} and r.state <> 'dead'
      returning id
    ), w as (
      update agents set state = 'running', last_activity_at = now()
       where id = ${request.toId} and (select state from r) = 'idle' and exists (select 1 from m)
      returning id
    ), n as (
      select pg_notify('agent_event_' || ${request.toId}, 'mail') from m
      union all
      select pg_notify('warren_work', ${request.toId}) from w
    )
    select exists (select 1 from r) as found,
           (select state from r) as state,
           (select tree_id = ${request.treeId} from r) as same_tree,
           (select id from m) as mail_id,
           exists (select 1 from w) as woke,
           (select count(*) from n)::int as notified`);
  const row = result.rows[0]!;
  if (!row.found || !row.same_tree) {
    throw new AgentError("UNKNOWN_AGENT", `no agent ${request.toId} in this tree`);
  }
  if (row.mail_id === null) throw new AgentError("AGENT_DEAD", `agent ${request.toId} is dead`);
  return { mailId: Number(row.mail_id), woke: row.woke };
}
