// A database outage under traffic (SPEC §5): every connection of a `warren -p` fan-in is cut and
// refused for ~2 s (a TCP proxy in front of Postgres) while its children run `bash sleep`. The run
// carries on: same answer, every mail exactly once, every agent idle, one reconnecting line and
// never SQL text. The same with every open connection turned half-open (silent, never closed).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.js";
import { sql } from "drizzle-orm";
import type { Db } from "../../src/db/client.js";
import { useE2E } from "../runtime/e2e-support.js";
import { childrenAsleep, expectExactlyOnce, scriptSleepyFanIn } from "./sleepy-fan-in.js";

const e2e = useE2E();
let proxy: TcpProxy;

beforeEach(async () => {
  const target = new URL(e2e.db().$client.options.connectionString!);
  proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
});
afterEach(async () => {
  await proxy.close();
});

/** Every agent of the newest tree with its state, lease and last events (for a failure). */
async function treeState(db: Db): Promise<string> {
  const rows = await db.execute<{ line: string }>(sql`
    select a.name || ' ' || a.state || ' lease=' || coalesce(a.lease_owner, '-') ||
           ' activity=' || coalesce(a.activity, '-') || ' events: ' ||
           coalesce((select string_agg(kind || ':' || left(content, 40), ' | ' order by id)
                       from (select * from events where agent_id = a.id
                              order by id desc limit 6) e), '') as line
      from agents a
     where a.tree_id = (select id from agents where parent_id is null
                         order by created_at desc limit 1)
     order by a.created_at`);
  return rows.rows.map((r) => r.line).join("\n");
}

async function fanInThrough(fault: () => Promise<void>, env: Record<string, string> = {}) {
  {
    scriptSleepyFanIn(e2e.fake(), { sleepSeconds: 3, waitSeconds: 60 });

    const url = e2e.db().$client.options.connectionString!;
    const run = e2e.prompt("fan out", {
      // Well inside the test's own timeout: a stuck run fails with its state shown below.
      timeout: 45,
      env: { DATABASE_URL: proxy.urlFor(url), WARREN_LEASE_SECONDS: "6", ...env },
    });
    const db = e2e.db();
    // Cut once all three children are inside `bash sleep`.
    await childrenAsleep(db);
    await fault();
    const result = await run;

    expect(result.stderr).not.toMatch(/Failed query|select |insert |update /i);
    expect(result.code, `${result.stderr}\n${await treeState(db)}`).toBe(0);
    expect(result.json?.text).toBe("all reported");
    // One line while reconnecting, nothing else.
    const lines = result.stderr.split("\n").filter((l) => l.trim());
    expect(lines.length, result.stderr).toBeLessThanOrEqual(1);
    lines.forEach((line) =>
      expect(line).toMatch(/^warren: database unreachable \(.+\); retrying$/),
    );

    await expectExactlyOnce(db, result.json!.tree_id);
  }
}

// A run that once made no progress after the outage had lost its only worker thread: a cut landed
// while a client was checked out for a transaction, its unheard 'error' event ended the thread,
// and nothing restarted it (test/faults/thread-survives.test.ts covers both now).
describe("database outage", () => {
  it("a -p fan-in survives every connection being cut and refused for 2 s", () =>
    fanInThrough(() => proxy.outage(2_000)));

  it("a -p fan-in survives every open connection going half-open", () =>
    // A statement on a silent connection times out; its client is dropped and the work retried
    // on a fresh connection.
    fanInThrough(async () => proxy.halfOpenAll(), { WARREN_DB_QUERY_TIMEOUT_MS: "1500" }));
});
