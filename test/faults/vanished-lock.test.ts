// Locks cannot outlive their client (SPEC §5). A client configured like warren's (createDb) locks a
// tree's root row inside a transaction and then vanishes: its network goes silent (a TCP proxy
// stops forwarding, sockets left open), so the server never hears it close. Its session's
// idle_in_transaction_session_timeout (WARREN_DB_IDLE_TX_TIMEOUT_MS, small here) ends that
// transaction, so a fork, a kill and a send in that tree by another connection complete instead of
// blocking. Without that timeout the lock stays: the other connection waits until its own
// lock_timeout gives up (55P03, retried as transient — and failing again while the lock stays).
import { sql } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTree, forkAgent, killAgent } from "../../src/agents/tree.js";
import { closeDb, createDb, type Db } from "../../src/db/client.js";
import { isTransient, rootCause } from "../../src/db/retry.js";
import { sendMailIn } from "../../src/mail/send-fenced.js";
import { useTestDatabase } from "../support/db.js";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.js";

const database = useTestDatabase();
let proxy: TcpProxy;
const opened: Db[] = [];
/** Ends each abandoned transaction, so that its pool can close. */
const abandoned: (() => void)[] = [];
const savedEnv = process.env.WARREN_DB_IDLE_TX_TIMEOUT_MS;

beforeEach(async () => {
  const target = new URL(database().url);
  proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
});
afterEach(async () => {
  abandoned.splice(0).forEach((end) => end());
  if (savedEnv === undefined) delete process.env.WARREN_DB_IDLE_TX_TIMEOUT_MS;
  else process.env.WARREN_DB_IDLE_TX_TIMEOUT_MS = savedEnv;
  await proxy.close();
  await Promise.all(opened.splice(0).map(closeDb));
});

/**
 * Through the proxy, a warren-configured client (idle-in-transaction timeout `idleTxMs` from the
 * environment, as a deployment would set it) locks `rootId`'s row for update, then its network
 * goes silent for good. Resolves once the lock is held and the client is unreachable.
 */
async function vanishHoldingRoot(rootId: string, idleTxMs: string): Promise<void> {
  process.env.WARREN_DB_IDLE_TX_TIMEOUT_MS = idleTxMs;
  // A short client-side timeout only so that this abandoned client is cleaned up quickly.
  const locker = createDb(proxy.urlFor(database().url), { max: 1, queryTimeoutMs: 1_000 });
  opened.push(locker);
  let locked = () => {};
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  void locker
    .transaction(async (tx) => {
      await tx.execute(sql`select id from agents where id = ${rootId} for update`);
      locked();
      // Never another statement (until the test's cleanup rolls it back).
      await new Promise((_, reject) => abandoned.push(() => reject(new Error("cleanup"))));
    })
    .catch(() => undefined);
  await isLocked;
  proxy.halfOpenAll();
}

async function treeWithChild(db: Db) {
  const root = await createTree(db, { name: "root" });
  const child = await forkAgent(db, root.id, { name: "child" });
  return { root, child };
}

const send = (db: Db, treeId: string, fromId: string, toId: string) =>
  db.transaction((tx) => sendMailIn(tx, { treeId, fromId, toId, body: "hello" }));

describe("a client that vanishes holding a tree's root lock", () => {
  it("loses it to idle_in_transaction_session_timeout: fork, kill and send go through", async () => {
    // The other connection: warren's defaults (lock_timeout 10 s), direct to the server. Each
    // operation below would fail with 55P03 after 10 s if the vanished client kept its lock.
    const { db } = database();
    const { root, child } = await treeWithChild(db);

    await vanishHoldingRoot(root.id, "1500");
    const forked = await forkAgent(db, root.id, { name: "second" });
    expect(forked.parent_id).toBe(root.id);

    await vanishHoldingRoot(root.id, "1500");
    expect(await killAgent(db, { targetId: child.id, byAgentId: null })).toEqual([child.id]);

    await vanishHoldingRoot(root.id, "1500");
    const receipt = await send(db, root.id, forked.id, root.id);
    expect(receipt).toBeDefined();
  });

  it("keeps it without that timeout: the others wait until their own lock_timeout gives up", async () => {
    const waiter = createDb(database().url, { session: { lockTimeoutMs: 4_000 } });
    opened.push(waiter);
    const { root } = await treeWithChild(database().db);

    await vanishHoldingRoot(root.id, "0"); // 0: no idle-in-transaction timeout
    // Blocked well past the 1.5 s that sufficed above, until lock_timeout ends the wait.
    const err = await forkAgent(waiter, root.id, { name: "blocked" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((rootCause(err) as { code?: string }).code).toBe("55P03");
    expect(isTransient(err)).toBe(true);
    const living = await database().db.execute<{ n: number }>(
      sql`select count(*)::int as n from agents where tree_id = ${root.id}`,
    );
    expect(living.rows[0]!.n).toBe(2);
  });
});
