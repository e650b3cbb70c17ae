// A page of an agent's newest history (listRecentEvents) costs the page: read backwards along the
// agent's index whatever the statistics say (migrations/0013_recent_events.sql), not a scan of
// every event of the agent and a sort, which the planner chose with a fresh table's statistics.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { listRecentEvents } from "../../src/agents/events.js";
import { createTree } from "../../src/agents/tree.js";
import type { Queryable } from "../../src/db/client.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();

/** Rows of events this transaction fetched so far, by index and bitmap scans. */
async function fetched(tx: Queryable): Promise<number> {
  const result = await tx.execute<{ n: number }>(sql`
    select (pg_stat_get_xact_tuples_fetched('events'::regclass)
          + pg_stat_get_xact_tuples_fetched('events_agent_idx'::regclass))::int as n`);
  return result.rows[0]!.n;
}

describe("a page of recent history", () => {
  it("fetches the page, not the whole history, newest last and before an id", async () => {
    const { db } = database();
    const root = await createTree(db, { name: "main", model: "gpt-test" });
    await db.execute(sql`
      insert into events (agent_id, kind, content)
      select ${root.id}::uuid, 'user', 'event ' || i from generate_series(1, 10000) as i`);
    await db.transaction(async (tx) => {
      const before = await fetched(tx);
      const page = await listRecentEvents(tx, root.id, { limit: 200 });
      expect(page.map((e) => e.content)).toEqual(
        Array.from({ length: 200 }, (_, i) => `event ${9801 + i}`),
      );
      expect(typeof page[0]!.id).toBe("number");
      expect(page[0]!.created_at).toBeInstanceOf(Date);
      expect((await fetched(tx)) - before).toBeLessThan(400);
      const older = await listRecentEvents(tx, root.id, { before: page[0]!.id, limit: 200 });
      expect(older.at(-1)!.content).toBe("event 9800");
      expect(older).toHaveLength(200);
    });
  });
});
