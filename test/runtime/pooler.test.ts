// Through a real PgBouncer in transaction mode (issue 30 item 4): without WARREN_POOLER a run says
// once, in one line, that the pooler rejects the startup options and how to fix it; with
// WARREN_POOLER=transaction a `-p` fan-in delivers everything exactly once with LISTEN off (the
// default behind a pooler) and with LISTEN straight to Postgres; statements go unnamed (named
// ones would reach server connections that never prepared them); the session limits hold per
// transaction; migrations run through it and leave no lock behind.
import { sql } from "drizzle-orm";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, createDb, type Db } from "../../src/db/client.js";
import { runPrepared } from "../../src/db/prepared.js";
import { openDatabase } from "../../src/db/resolve.js";
import { isTransient } from "../../src/db/retry.js";
import { createTestDatabase } from "../support/db.js";
import {
  PGBOUNCER_MISSING,
  pgbouncerPath,
  startPgbouncer,
  type Pgbouncer,
} from "../support/pgbouncer.js";
import { useE2E } from "./e2e-support.js";
import { expectExactlyOnce, scriptSleepyFanIn } from "../faults/sleepy-fan-in.js";

const installed = pgbouncerPath() !== undefined;
if (!installed) process.stderr.write(`${PGBOUNCER_MISSING}\n`);

describe.skipIf(!installed)("through PgBouncer in transaction mode", () => {
  const e2e = useE2E();
  let bouncer: Pgbouncer;
  const direct = () => e2e.db().$client.options.connectionString!;
  const pooled = () => bouncer.urlFor(direct());

  beforeAll(async () => {
    bouncer = await startPgbouncer(direct());
  });
  afterAll(async () => {
    await bouncer?.stop();
  });

  it("without WARREN_POOLER: one line naming the fix, at once, never 'unreachable … retrying'", async () => {
    const started = Date.now();
    const run = await e2e.prompt("hello", { env: { DATABASE_URL: pooled() } });
    const lines = run.stderr.split("\n").filter((line) => line.trim());
    expect(run.code).toBe(1);
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^warren: the database at postgres:\/\/.+ rejects warren's startup options \(unsupported startup parameter: options \[08P01\]\): set WARREN_POOLER=transaction/,
    );
    expect(run.stderr).not.toMatch(/unreachable|retrying/);
    // Well inside the minute that retrying an outage would take (the machine may be loaded).
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  async function fanIn(listen: "off" | "direct") {
    scriptSleepyFanIn(e2e.fake(), { sleepSeconds: 1, waitSeconds: 60 });
    const started = Date.now();
    const run = await e2e.prompt("fan out", {
      timeout: 60,
      env: {
        DATABASE_URL: pooled(),
        WARREN_POOLER: "transaction",
        ...(listen === "direct" ? { WARREN_LISTEN_URL: direct() } : {}),
      },
    });
    const wallMs = Date.now() - started;
    expect(run.code, run.stderr).toBe(0);
    expect(run.json?.text).toBe("all reported");
    const lines = run.stderr.split("\n").filter((line) => line.trim());
    if (listen === "off") {
      // LISTEN is off by default behind a pooler: said once, then waits re-check every second.
      expect(lines, run.stderr).toEqual([
        "warren: notifications unavailable (LISTEN is off); waits and claims re-check every 1 s",
      ]);
    } else {
      expect(lines, run.stderr).toEqual([]);
    }
    await expectExactlyOnce(e2e.db(), run.json!.tree_id);
    process.stderr.write(`pooler, LISTEN ${listen}: -p fan-in took ${wallMs} ms\n`);
    expect(wallMs).toBeLessThan(45_000);
  }

  it("WARREN_POOLER=transaction, LISTEN off (the default): a -p fan-in delivers exactly once", () =>
    fanIn("off"));

  it("WARREN_POOLER=transaction, LISTEN direct: a -p fan-in delivers exactly once", () =>
    fanIn("direct"));

  it("named statements are not used: many concurrent calls over several server connections", async () => {
    const db = createDb(pooled(), { max: 8, pooler: true });
    try {
      const statement = { name: "warren_pooler_probe", text: "select $1::int + 1 as n" };
      const runs = Array.from({ length: 40 }, (_, i) =>
        runPrepared<{ n: number }>(db, statement, [i]),
      );
      const inTx = db.transaction((tx) => runPrepared<{ n: number }>(tx, statement, [100]));
      const results = await Promise.all([...runs, inTx]);
      expect(results.map((rows) => rows[0]!.n)).toEqual([
        ...Array.from({ length: 40 }, (_, i) => i + 1),
        101,
      ]);
    } finally {
      await closeDb(db);
    }
  });

  it("the session limits hold per transaction: a lock wait gives up after lock_timeout", async () => {
    const holder = new pg.Client({ connectionString: direct() });
    await holder.connect();
    const db = createDb(pooled(), { max: 2, pooler: true, session: { lockTimeoutMs: 300 } });
    try {
      await holder.query("begin");
      await holder.query("lock table agents in access exclusive mode");
      const started = Date.now();
      const failure = await db
        .transaction((tx) => tx.execute(sql`select count(*) from agents`))
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect((failure as { cause?: { code?: string } }).cause?.code).toBe("55P03");
      expect(isTransient(failure)).toBe(true);
    } finally {
      await holder.query("rollback").catch(() => {});
      await holder.end();
      await closeDb(db);
    }
  });

  it("migrates an empty database through the pooler, twice at once, and leaves no lock held", async () => {
    const empty = await createTestDatabase({ empty: true });
    const opened: Db[] = [];
    try {
      const env = { DATABASE_URL: bouncer.urlFor(empty.url), WARREN_POOLER: "transaction" };
      const both = await Promise.all([openDatabase(env), openDatabase(env)]);
      opened.push(...both.map((o) => o.db));
      const tables = await empty.db.execute<{ n: number }>(
        sql`select count(*)::int as n from information_schema.tables where table_name = 'agents'`,
      );
      expect(tables.rows[0]!.n).toBe(1);
      const locks = await empty.db.execute<{ n: number }>(
        sql`select count(*)::int as n from pg_locks where locktype = 'advisory'`,
      );
      expect(locks.rows[0]!.n).toBe(0);
    } finally {
      await Promise.all(opened.map(closeDb));
      await empty.drop();
    }
  });
});
