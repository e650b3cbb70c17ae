// interrupt(agent): stops the current turn of one agent (not its children); interruptSubtree stops
// an agent and every living descendant. The flag is durable and the NOTIFY makes the worker
// running the turn abort within milliseconds. Interrupted agents stay alive and take mail after.
import { sql } from "drizzle-orm";
import { LOCK_ORDER } from "../agents/lock-order.js";
import { stopNotifiesSql } from "../bus/channels.js";
import type { Queryable } from "../db/client.js";

/** Returns false when the agent has no turn to interrupt (idle, dead or unknown). */
export async function interruptAgent(q: Queryable, agentId: string): Promise<boolean> {
  const rows = await q.execute(sql`
    with r as (
      update agents set interrupt_requested_at = now()
       where id = ${agentId} and state in ('running', 'waiting')
      returning id
    )
    select ${stopNotifiesSql(sql`id`, "interrupt")} from r`);
  return rows.rows.length > 0;
}

/**
 * Interrupts `agentId` and all its living descendants that have a turn (running or waiting); idle
 * ones are left unflagged, so their next turn is not cut short. Returns the ids interrupted.
 * The walk passes through idle agents: a running grandchild under an idle child is stopped too.
 */
export async function interruptSubtree(q: Queryable, agentId: string): Promise<string[]> {
  // The rows are locked first, in LOCK_ORDER (lock-order.ts), as every multi-row lock is: a plain
  // multi-row UPDATE locks in scan order and could deadlock against a heartbeat or a kill.
  const rows = await q.execute<{ id: string }>(sql`
    with recursive subtree as (
      select id, tree_id from agents where id = ${agentId} and state <> 'dead'
      union all
      select a.id, a.tree_id from agents a
        join subtree s on a.parent_id = s.id and a.tree_id = s.tree_id
       where a.state <> 'dead'
    ), locked as (
      select id from agents
       where id in (select id from subtree) and state in ('running', 'waiting')
       order by ${LOCK_ORDER}
       for no key update
    ), r as (
      update agents a set interrupt_requested_at = now()
        from locked where a.id = locked.id and a.state in ('running', 'waiting')
      returning a.id
    )
    select id, ${stopNotifiesSql(sql`id`, "interrupt")} from r`);
  return rows.rows.map((row) => row.id);
}
