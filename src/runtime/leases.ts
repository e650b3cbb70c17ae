// Leases: a turn is claimed with FOR UPDATE SKIP LOCKED, kept alive by heartbeat and taken over
// by anyone once it expires, so across every process each agent's turn runs in one place. Every
// effect of a turn is fenced by the lease (assertLease), so a worker that lost it writes nothing.
import { sql } from "drizzle-orm";
import type { AgentRow } from "../agents/agents.sql.js";
import { agents } from "../agents/agents.sql.js";
import { LeaseLost } from "../agents/errors.js";
import { assertLease, LOCK_ORDER } from "../agents/lock-order.js";
import { DURABLE_COMMIT, type Queryable } from "../db/client.js";
import { rowFromJson } from "../db/json-row.js";
import { runPrepared, type Prepared } from "../db/prepared.js";

export { assertLease, LeaseLost };

/** Claims one agent with work whose lease is free or expired (of one tree, when `treeId` is set). */
export async function claimNext(
  q: Queryable,
  owner: string,
  leaseSeconds: number,
  treeId?: string,
  /** Agents this worker runs already: a lease of its own that expired under load is not a claim. */
  skip: readonly string[] = [],
): Promise<AgentRow | undefined> {
  const [row] = await claimUpTo(q, owner, leaseSeconds, 1, treeId, skip);
  return row;
}

/**
 * Claims up to `limit` agents with work, in one statement: a scheduler with free slots fills them
 * at once, and learns there is no more work from a short answer instead of one more empty claim.
 */
export async function claimUpTo(
  q: Queryable,
  owner: string,
  leaseSeconds: number,
  limit: number,
  treeId?: string,
  skip: readonly string[] = [],
): Promise<AgentRow[]> {
  // Rows locked with SKIP LOCKED: it never waits, so it cannot take part in a deadlock. The epoch
  // moves on every claim: the previous owner's writes, stamped with the old one, are refused.
  // Durable even in a session with relaxed commits: a claim lost to a server crash would hand the
  // same epoch to the next claimer while this worker still writes with it.
  const rows = await runPrepared<{ row: Record<string, unknown> }>(q, CLAIM, [
    owner,
    leaseSeconds,
    treeId ?? null,
    [...skip],
    limit,
  ]);
  return rows.map(({ row }) => rowFromJson(agents, row));
}

/** $1 owner, $2 lease seconds, $3 tree (null: any), $4 ids to skip, $5 how many at most. */
const CLAIM: Prepared = {
  name: "warren_claim",
  text: `update agents set lease_owner = $1::text,
                           lease_expires_at = now() + make_interval(secs => $2::float8),
                           lease_epoch = lease_epoch + 1
          where (${DURABLE_COMMIT}) is not null and id in (
            select id from agents
             where state in ('running', 'waiting')
               and (lease_expires_at is null or lease_expires_at < now())
               and ($3::uuid is null or tree_id = $3::uuid)
               and id <> all($4::uuid[])
             order by last_activity_at
             limit $5::int
             for update skip locked)
         returning to_jsonb(agents.*) as row`,
};

export type HeartbeatRow = {
  id: string;
  state: string;
  interrupt: boolean;
  /** False when the row was locked by someone else: not extended this time, but still held. */
  extended: boolean;
};

/**
 * Extends the leases still held; agents missing from the answer were lost (or are gone). A row
 * locked by another transaction is skipped, not waited for: one locked row delays its own
 * heartbeat (three beats fit in a lease), never the leases of every other agent of the thread.
 */
export async function heartbeat(
  q: Queryable,
  owner: string,
  ids: string[],
  leaseSeconds: number,
): Promise<HeartbeatRow[]> {
  if (ids.length === 0) return [];
  // A plain multi-row UPDATE locks rows in whatever order the scan meets them, which deadlocked
  // against forks and kills. The CTE locks them first, in LOCK_ORDER (roots, then by id).
  const rows = await q.execute<HeartbeatRow>(sql`
    with locked as (
      select id from agents
       where id = any(${sql.param(ids)}::uuid[]) and lease_owner = ${owner}
       order by ${LOCK_ORDER}
       for no key update skip locked
    ), beat as (
      update agents a set lease_expires_at = now() + make_interval(secs => ${leaseSeconds})
        from locked where a.id = locked.id and a.lease_owner = ${owner}
      returning a.id
    )
    select a.id, a.state, a.interrupt_requested_at is not null as interrupt,
           exists (select 1 from beat where beat.id = a.id) as extended
      from agents a
     where a.id = any(${sql.param(ids)}::uuid[]) and a.lease_owner = ${owner}`);
  return rows.rows;
}

/** Gives a lease back without changing state (shutdown): another worker may resume at once. */
export async function release(q: Queryable, owner: string, id: string): Promise<void> {
  await q.execute(sql`
    update agents set lease_owner = null, lease_expires_at = null
     where id = ${id} and lease_owner = ${owner}`);
}
