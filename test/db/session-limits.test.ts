// Every warren session carries the server-side limits (SessionLimits in src/db/client.ts): the
// settings reach the server as startup options, a lock wait and an idle transaction end with
// errors that are retried as transient, and a client whose connection the server ends between two
// statements of a transaction fails that transaction instead of the process.
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { closeDb, createDb, sessionConfig, sessionLimits, type Db } from "../../src/db/client.js";
import { isTransient, rootCause } from "../../src/db/retry.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();
const opened: Db[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map(closeDb));
});

function open(session: Parameters<typeof createDb>[1] = {}): Db {
  const db = createDb(database().url, { max: 2, ...session });
  opened.push(db);
  return db;
}

async function setting(db: Db, name: string): Promise<string> {
  const rows = await db.execute<{ value: string }>(sql`select current_setting(${name}) as value`);
  return rows.rows[0]!.value;
}

describe("session limits", () => {
  it("defaults: idle in transaction 15 s, lock wait 10 s, statement twice the query timeout", () => {
    expect(sessionLimits({}, 30_000)).toEqual({
      idleInTransactionMs: 15_000,
      lockTimeoutMs: 10_000,
      statementTimeoutMs: 60_000,
    });
    expect(sessionConfig(sessionLimits({}, 30_000))).toEqual({
      options:
        "-c idle_in_transaction_session_timeout=15000 -c lock_timeout=10000 -c statement_timeout=60000",
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    // 0 leaves a setting to the server (e.g. behind a pooler that rejects startup options).
    const none = { idleInTransactionMs: 0, lockTimeoutMs: 0, statementTimeoutMs: 0 };
    expect(sessionConfig(none).options).toBeUndefined();
  });

  it("reach the server as startup options", async () => {
    const db = open();
    expect(await setting(db, "idle_in_transaction_session_timeout")).toBe("15s");
    expect(await setting(db, "lock_timeout")).toBe("10s");
    expect(await setting(db, "statement_timeout")).toBe("1min");
    const custom = open({ session: { idleInTransactionMs: 700, lockTimeoutMs: 300 } });
    expect(await setting(custom, "idle_in_transaction_session_timeout")).toBe("700ms");
    expect(await setting(custom, "lock_timeout")).toBe("300ms");
    // The runtime's sessions: relaxed commits, and named statements planned once.
    const runtime = open({ relaxedCommits: true });
    expect(await setting(runtime, "synchronous_commit")).toBe("off");
    expect(await setting(runtime, "plan_cache_mode")).toBe("force_generic_plan");
    expect(await setting(db, "plan_cache_mode")).toBe("auto");
  });

  it("a wait behind a lock longer than lock_timeout fails transiently (55P03)", async () => {
    const holder = open();
    const waiter = open({ session: { lockTimeoutMs: 300 } });
    await holder.execute(sql`create table if not exists lock_probe (id int primary key)`);
    await holder.execute(sql`insert into lock_probe values (1) on conflict do nothing`);
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked = () => {};
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holding = holder.transaction(async (tx) => {
      await tx.execute(sql`select id from lock_probe where id = 1 for update`);
      locked();
      await held;
    });
    await isLocked;
    const err = await waiter.execute(sql`select id from lock_probe where id = 1 for update`).then(
      () => undefined,
      (e: unknown) => e,
    );
    release();
    await holding;
    expect((rootCause(err) as { code?: string }).code).toBe("55P03");
    expect(isTransient(err)).toBe(true);
  });

  it("a transaction left idle is ended by the server; its client fails transiently, the process lives", async () => {
    const db = open({ session: { idleInTransactionMs: 300 } });
    const err = await db
      .transaction(async (tx) => {
        await tx.execute(sql`select 1`);
        // The server ends the session meanwhile: pg emits 'error' on the checked-out client.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await tx.execute(sql`select 2`);
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeDefined();
    expect(isTransient(err)).toBe(true);
    // The pool dropped that client: the next statement runs on a fresh connection.
    expect(await setting(db, "lock_timeout")).toBe("10s");
  });
});
