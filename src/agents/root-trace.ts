// Where a root's current turn is traced (telemetry): its run's traceparent kept on its row
// (agents.trace_context, which a child's row holds for its fork call), so a run that resumes the
// turn in another worker joins the same trace.
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.js";

/** Keeps `traceparent` as the root's; a child's row (its fork's span) is never changed. */
export async function setRootTrace(db: Db, rootId: string, traceparent: string): Promise<void> {
  await db.execute(sql`
    update agents set trace_context = ${traceparent} where id = ${rootId} and parent_id is null`);
}
