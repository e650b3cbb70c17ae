// A model server's capacity, shared (SPEC §3 "Model concurrency", issue 30 §3): `warren worker`
// and `warren -p`, two processes on one database, with `max_concurrent_requests: 2` and a tree
// whose fan-out would send six (concurrency 3 each) or ten requests at once. The fake server never sees a third request in
// flight, agents over the cap show `queued` (and lend their scheduler slots meanwhile), and the
// tree finishes with every model call, turn and mail exactly once.
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { QUEUED_ACTIVITY } from "../../src/feed/types.js";
import { useTestDatabase } from "../support/db.js";
import { PGBOUNCER_MISSING, pgbouncerPath, startPgbouncer } from "../support/pgbouncer.js";
import { runScaleOut } from "./scale-run.js";

const database = useTestDatabase();
const pooled = pgbouncerPath() !== undefined;
if (!pooled) process.stderr.write(`${PGBOUNCER_MISSING}\n`);

describe("max_concurrent_requests across processes", () => {
  it("a cap of 2 holds across a worker and -p: never a third request in flight, all exactly once", async () => {
    let queuedSeen = 0;
    let mostLeasedByOne = 0;
    let mostGranted = 0;
    const watch = async (admin: pg.Client) => {
      const { rows } = await admin.query<{ queued: number; leased: number; granted: number }>(
        `select (select count(*)::int from agents where state = 'running' and activity = $1) as queued,
                (select coalesce(max(n), 0)::int from (select count(*) as n from agents
                  where lease_expires_at > now() group by lease_owner) o) as leased,
                (select count(*)::int from model_slots where granted) as granted`,
        [QUEUED_ACTIVITY],
      );
      queuedSeen = Math.max(queuedSeen, rows[0]!.queued);
      mostLeasedByOne = Math.max(mostLeasedByOne, rows[0]!.leased);
      mostGranted = Math.max(mostGranted, rows[0]!.granted);
    };
    const result = await runScaleOut({
      databaseUrl: database().url,
      shape: [10],
      workers: 1,
      timeoutSeconds: 120,
      replyDelayMs: 300,
      config: { max_concurrent_requests: 2, concurrency: 3 },
      watch,
      log: (line) => process.stderr.write(`model-cap: ${line}\n`),
    });
    process.stderr.write(
      `model-cap: ${result.modelRequests} requests, at most ${result.maxInFlight} in flight, ` +
        `${queuedSeen} queued at once, ${mostLeasedByOne} leases held by one process (concurrency 3)\n`,
    );
    expect(result.verdict.problems).toEqual([]);
    expect(result.run.code, result.run.stderr).toBe(0);
    expect(JSON.parse(result.run.stdout)).toMatchObject({ text: "root done: 10 reports" });
    // The cap, as the server saw it, and as the rows say.
    expect(result.maxInFlight).toBe(2);
    expect(mostGranted).toBeLessThanOrEqual(2);
    // Over the cap, agents showed `queued`...
    expect(queuedSeen).toBeGreaterThan(0);
    // ...and lent their scheduler slots: one process held more agents than its 3 slots (plus the
    // root, whose `wait` lends its own).
    expect(mostLeasedByOne).toBeGreaterThan(4);
  }, 180_000);

  it.runIf(pooled)(
    "holds through PgBouncer in transaction mode with LISTEN off (re-checks instead of NOTIFYs)",
    async () => {
      const bouncer = await startPgbouncer(database().url);
      try {
        const result = await runScaleOut({
          databaseUrl: bouncer.urlFor(database().url),
          env: { WARREN_POOLER: "transaction", WARREN_LISTEN_URL: "off" },
          shape: [6],
          workers: 1,
          timeoutSeconds: 120,
          replyDelayMs: 300,
          config: { max_concurrent_requests: 2 },
        });
        expect(result.verdict.problems).toEqual([]);
        expect(result.run.code, result.run.stderr).toBe(0);
        expect(result.maxInFlight).toBe(2);
      } finally {
        await bouncer.stop();
      }
    },
    180_000,
  );
});
