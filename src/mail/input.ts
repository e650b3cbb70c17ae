// Person input to an agent: saved as a mail row of kind 'input' (so a crash loses nothing) and
// delivered as a `user` event when the agent's turn ends; an idle agent is woken at once.
import { sql } from "drizzle-orm";
import type { Db, Queryable } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import { AgentError } from "../agents/errors.js";
import { isUuid } from "../agents/refs.js";
import { validateText } from "../agents/text.js";
import { validateBody } from "./send.js";

export interface InputReceipt {
  mailId: number;
  /** The agent was idle and now has a turn to run (the input starts it). */
  woke: boolean;
}

export interface PendingInput {
  id: number;
  body: string;
  created_at: Date;
}

/** Text a person typed: non-empty, valid UTF-8 (no lone surrogates), no NUL, within the size limit. */
export function validateInput(text: unknown, maxBytes?: number): string {
  if (typeof text === "string") validateText(text, "input");
  return validateBody(text, maxBytes);
}

// Same shape and locking as send's SEND (see src/mail/send.ts): `for key share` orders this
// against the agent going idle, so the input is either taken in by that end of turn or sees the
// committed `idle` and wakes the agent. No agent-channel NOTIFY: a waiting agent's `wait` never
// takes input, so there is nothing for it to re-check; the mail trigger tells feeds ('i:').
const SEND_INPUT: Prepared = {
  name: "warren_send_input",
  text: `
    with r as (
      select id, tree_id, state from agents where id = $1::uuid for key share
    ), m as (
      insert into mail (tree_id, from_id, to_id, body, kind)
      select r.tree_id, null, r.id, $2::text, 'input' from r where r.state <> 'dead'
      returning id
    ), w as (
      update agents set state = 'running', last_activity_at = now()
       where id = $1::uuid and (select state from r) = 'idle' and exists (select 1 from m)
      returning id
    ), n as (
      select pg_notify('warren_work', $1::text) from w
    )
    select exists (select 1 from r) as found,
           (select id from m) as mail_id,
           exists (select 1 from w) as woke,
           (select count(*) from n)::int as notified`,
};

/**
 * Queues `text` as the person's input to `agentId`: AGENT_DEAD, UNKNOWN_AGENT, INVALID_ARGS or
 * LIMIT_EXCEEDED (over `maxBytes`, the config's `limits.maxMessageBytes`; default 64 KiB).
 */
export async function sendInput(
  db: Db,
  agentId: string,
  text: string,
  maxBytes?: number,
): Promise<InputReceipt> {
  const body = validateInput(text, maxBytes);
  if (!isUuid(agentId)) throw new AgentError("UNKNOWN_AGENT", `no agent ${agentId}`);
  const [row] = await runPrepared<{ found: boolean; mail_id: string | null; woke: boolean }>(
    db,
    SEND_INPUT,
    [agentId, body],
  );
  if (!row?.found) throw new AgentError("UNKNOWN_AGENT", `no agent ${agentId}`);
  if (row.mail_id === null) throw new AgentError("AGENT_DEAD", `agent ${agentId} is dead`);
  return { mailId: Number(row.mail_id), woke: row.woke };
}

/** The agent's input not yet delivered, oldest first (the "pending" display). */
export async function pendingInputs(q: Queryable, agentId: string): Promise<PendingInput[]> {
  if (!isUuid(agentId)) return [];
  const rows = await q.execute<{ id: string; body: string; created_at: string | Date }>(sql`
    select id, body, created_at from mail
     where to_id = ${agentId} and kind = 'input' and consumed_at is null
     order by id`);
  return rows.rows.map((r) => ({
    id: Number(r.id),
    body: r.body,
    created_at: new Date(r.created_at),
  }));
}
