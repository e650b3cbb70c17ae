// For tests of row locks: did a statement wait for a lock, or finish without one?
import { sql } from "drizzle-orm";
import type { Db } from "../../src/db/client.js";

/**
 * "blocked" as soon as a session of this database waits on a lock, else what `work` settles to
 * first ("settled" when it ends without waiting: the lock that should have held it is missing).
 */
export async function blockedOrSettled(db: Db, work: Promise<unknown>): Promise<string> {
  let done = false;
  const settled = work.then(
    () => "settled",
    () => "settled",
  );
  const blocked = (async () => {
    while (!done) {
      const waiting = await db.execute(
        sql`select 1 from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`,
      );
      if (waiting.rows.length > 0) return "blocked";
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return "settled";
  })();
  const seen = await Promise.race([settled, blocked]);
  done = true;
  return seen;
}
