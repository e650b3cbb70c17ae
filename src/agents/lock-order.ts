// THE lock order of warren (SPEC §5). Every transaction that locks more than one row takes its
// locks in this order, and never waits for a row earlier in it than one it already holds:
//
//   1. tree root rows (agents where id = tree_id), by id — fork and kill lock their tree's root
//      first, which also serialises them within a tree (so a kill sees every committed child and
//      a fork sees a dead parent: no living orphan);
//   2. other agent rows, by id — the caller of a fenced effect (its lease check), the parent of a
//      fork, kill's victims, both ends of a send, the heartbeat's many rows;
//   3. mail rows, by id (consumed with SKIP LOCKED, so they never wait).
//
// Statements that lock one row only (claim with SKIP LOCKED, setState, markIdle, interrupt) fit
// any position. Multi-row locks are taken by one SELECT … ORDER BY … FOR …, whose rows are locked
// in output order: ORDER_SQL below is that order.
import { sql } from "drizzle-orm";
import type { Queryable } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import { LeaseLost, type Fence } from "./errors.js";

/** The ORDER BY of rule 1 and 2: roots first (false sorts before true), then by id. */
/** The ORDER BY of rule 1 and 2 as statement text (for named statements). */
export const LOCK_ORDER_TEXT = "(id <> tree_id), id";
export const LOCK_ORDER = sql.raw(LOCK_ORDER_TEXT);

export type RowLock = "update" | "no key update" | "share" | "key share";

export type LockedAgent = {
  id: string;
  tree_id: string;
  parent_id: string | null;
  name: string;
  state: string;
  depth: number;
  lease_owner: string | null;
};

/** Locks the agent rows `ids` (those that exist) in lock order; returns them in that order. */
export async function lockAgents(
  tx: Queryable,
  ids: string[],
  mode: RowLock,
): Promise<LockedAgent[]> {
  if (ids.length === 0) return [];
  return runPrepared<LockedAgent>(tx, LOCK_STATEMENTS[mode], [[...new Set(ids)]]);
}

const LOCK_STATEMENTS = Object.fromEntries(
  (["update", "no key update", "share", "key share"] as const).map((mode) => [
    mode,
    {
      name: `warren_lock_agents_${mode.replaceAll(" ", "_")}`,
      text: `select id, tree_id, parent_id, name, state, depth, lease_owner from agents
              where id = any($1::uuid[]) order by ${LOCK_ORDER_TEXT} for ${mode}`,
    },
  ]),
) as Record<RowLock, Prepared>;

/**
 * Inside a transaction: locks the agent's row FOR KEY SHARE and checks that `fence` (owner and
 * epoch) still holds its lease, else throws LeaseLost (rolling the transaction back). The claim of a takeover takes
 * the row FOR UPDATE, which conflicts with this lock: a takeover either committed before (we see
 * the new owner) or waits until this transaction has committed — never both writing.
 * Lock order: the caller must take this lock in LOCK_ORDER position (above).
 */
export async function assertLease(tx: Queryable, agentId: string, fence: Fence): Promise<void> {
  const rows = await tx.execute<{ held: boolean }>(sql`
    select lease_owner is not distinct from ${fence.owner} and lease_epoch = ${fence.epoch} as held
      from agents where id = ${agentId} for key share`);
  if (rows.rows[0]?.held !== true) throw new LeaseLost(agentId);
}
