// interrupt(agent): stops the current turn of one agent (not its children). The flag is durable
// and the NOTIFY makes the worker running the turn abort within milliseconds.
import { sql } from "drizzle-orm";
import type { Queryable } from "../db/client.js";

/** Returns false when the agent has no turn to interrupt (idle, dead or unknown). */
export async function interruptAgent(q: Queryable, agentId: string): Promise<boolean> {
  const rows = await q.execute(sql`
    with r as (
      update agents set interrupt_requested_at = now()
       where id = ${agentId} and state in ('running', 'waiting')
      returning id
    )
    select pg_notify('agent_event_' || id, 'interrupt') from r`);
  return rows.rows.length > 0;
}
