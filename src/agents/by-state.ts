// The living agents counted by state (the `warren.agents` telemetry gauge): one grouped read.
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.js";

/** Agents not yet reaped, by state (`failed`: idle after a turn that failed), of one tree or all. */
export async function agentsByState(db: Db, treeId?: string): Promise<Record<string, number>> {
  const rows = await db.execute<{ state: string; n: number }>(sql`
    select case when state = 'idle' and failure is not null then 'failed' else state end as state,
           count(*)::int as n
      from agents
     where reaped_at is null ${treeId ? sql`and tree_id = ${treeId}` : sql``}
     group by 1`);
  return Object.fromEntries(rows.rows.map((r) => [r.state, Number(r.n)]));
}
