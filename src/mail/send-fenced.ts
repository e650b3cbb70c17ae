// An agent's send inside a transaction that also records its tool result (tools/effects.ts):
// both ends locked in lock order, the sender's lease checked, the mail inserted, an idle
// recipient woken and NOTIFYs sent on commit.
import { sql } from "drizzle-orm";
import { AgentError, LeaseLost } from "../agents/errors.js";
import { lockAgents } from "../agents/lock-order.js";
import { isUuid } from "../agents/refs.js";
import type { Queryable } from "../db/client.js";
import { validateBody, type SendReceipt, type SendRequest } from "./send.js";

export async function sendMailIn(
  tx: Queryable,
  request: SendRequest & { leaseOwner?: string },
): Promise<SendReceipt> {
  const body = validateBody(request.body, request.maxBytes);
  if (!isUuid(request.toId)) throw new AgentError("UNKNOWN_AGENT", `no agent ${request.toId}`);
  // `key share` on the recipient conflicts with takePendingMail's `for update`: either it sees
  // this mail, or this reads its committed `idle` and wakes the agent (as send.ts explains). It
  // does not conflict with itself, so a fan-in's children report to their parent at once instead
  // of one after another; on the sender it conflicts with a takeover's claim (`for update`).
  const ids = request.fromId ? [request.fromId, request.toId] : [request.toId];
  const locked = await lockAgents(tx, ids, "key share");
  if (request.leaseOwner !== undefined && request.fromId) {
    const from = locked.find((r) => r.id === request.fromId);
    if (from?.lease_owner !== request.leaseOwner) throw new LeaseLost(request.fromId);
  }
  const to = locked.find((r) => r.id === request.toId);
  if (!to || to.tree_id !== request.treeId) {
    throw new AgentError("UNKNOWN_AGENT", `no agent ${request.toId} in this tree`);
  }
  if (to.state === "dead") throw new AgentError("AGENT_DEAD", `agent ${request.toId} is dead`);
  // One statement: the mail, the wake-up of an idle recipient and the NOTIFYs (sent on commit).
  const woke = to.state === "idle";
  const inserted = await tx.execute<{ id: string }>(sql`
    with m as (
      insert into mail (tree_id, from_id, to_id, body)
      values (${to.tree_id}, ${request.fromId}, ${to.id}, ${body}) returning id
    ), w as (
      update agents set state = 'running', last_activity_at = now()
       where id = ${to.id} and ${woke}
      returning id
    )
    select m.id, pg_notify(${`agent_event_${to.id}`}, 'mail'),
           (select pg_notify('warren_work', ${to.id}) from w)
      from m`);
  return { mailId: Number(inserted.rows[0]!.id), woke };
}
