// The LISTEN bus: surviving a killed listener connection, and connections that do not grow with
// the number of agents.
import { sql } from "drizzle-orm";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import type { AgentRow } from "../../src/agents/agents.sql.js";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { createBus, RECONNECTED, type Bus } from "../../src/bus/bus.js";
import { agentChannel } from "../../src/bus/channels.js";
import type { Db } from "../../src/db/client.js";
import type { Warning } from "../../src/db/warning.js";
import { sendMail } from "../../src/mail/send.js";
import { waitForMail } from "../../src/mail/wait.js";
import { listenBackends, sleep } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { startPgProxy } from "../support/pg-proxy.js";

const database = useTestDatabase();
let db: Db;
let bus: Bus;
const warnings: Warning[] = [];

beforeAll(async () => {
  db = database().db;
  bus = await createBus(database().url, { onWarning: (warning) => warnings.push(warning) });
});

afterAll(async () => {
  await bus?.close();
});

/** The pid of the single LISTEN backend (a new one when `notPid` is given). */
async function listenerPid(notPid?: number): Promise<number> {
  return vi.waitFor(
    async () => {
      const backends = await listenBackends(db);
      expect(backends).toHaveLength(1);
      expect(backends[0]!.pid).not.toBe(notPid);
      return backends[0]!.pid;
    },
    { timeout: 10_000, interval: 20 },
  );
}

/** Opens or closes the test database to new connections (from the admin database). */
async function allowConnections(allow: boolean): Promise<void> {
  const name = new URL(database().url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: inject("testDatabaseAdminUrl") });
  await admin.connect();
  try {
    await admin.query(`alter database "${name}" with allow_connections ${allow}`);
  } finally {
    await admin.end();
  }
}

async function terminate(pid: number): Promise<void> {
  await db.execute(sql`select pg_terminate_backend(${pid})`);
}

/**
 * A parent blocked in `wait` (re-check far beyond the timeout) and a child that will write.
 * A subscription of our own on the parent's channel, made first, tells when LISTEN is active and
 * when the bus has reconnected.
 */
async function blockedParent() {
  const parent = await createTree(db, { name: "boss" });
  const child = await forkAgent(db, parent.id, { name: "child", prompt: "work" });
  const payloads: string[] = [];
  const off = await bus.subscribe(agentChannel(parent.id), (payload) => payloads.push(payload));
  const started = Date.now();
  const waiting = waitForMail(db, bus, {
    agentId: parent.id,
    timeoutSeconds: 30,
    recheckMs: 60_000,
  });
  await sleep(200); // the waiter's first check, which finds nothing
  const send = () =>
    sendMail(db, { treeId: parent.id, fromId: child.id, toId: parent.id, body: "result" });
  return { started, waiting, send, payloads, off };
}

describe("listener loss", () => {
  it("a NOTIFY missed while the listener is down is caught by the re-check after reconnecting", async () => {
    const { started, waiting, send, payloads, off } = await blockedParent();
    let returned = false;
    void waiting.then(() => (returned = true));
    const pid = await listenerPid();
    // Keep the listener from reconnecting until the mail (and its NOTIFY) has been sent; the
    // pool's open connections stay usable.
    await allowConnections(false);
    try {
      await terminate(pid);
      await send();
      await vi.waitFor(() =>
        expect(warnings).toContainEqual({ kind: "outage", cause: "connection lost" }),
      );
      await sleep(300);
      expect(returned).toBe(false);
      expect(payloads).not.toContain("mail");
    } finally {
      await allowConnections(true);
    }
    const outcome = await waiting;
    expect(outcome.result).toMatchObject({ from_name: "child", message: "result" });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(payloads).toContain(RECONNECTED);
    off();
    await listenerPid(pid);
  });

  it("after the reconnect the channel is LISTENed again and a later NOTIFY wakes the wait", async () => {
    const { started, waiting, send, payloads, off } = await blockedParent();
    const pid = await listenerPid();
    await terminate(pid);
    // RECONNECTED is announced once every channel is LISTENed again on the new connection.
    await vi.waitFor(() => expect(payloads).toContain(RECONNECTED), { timeout: 10_000 });
    await listenerPid(pid);
    await sleep(200); // the re-check prompted by the reconnect finds nothing yet
    await send();
    const outcome = await waiting;
    expect(outcome.result).toMatchObject({ message: "result" });
    expect(Date.now() - started).toBeLessThan(30_000);
    await vi.waitFor(() => expect(payloads).toContain("mail"));
    off();
    expect(bus.channelCount()).toBe(0);
  });
});

describe("connections do not grow with agents", () => {
  it("200 agents, mail among them and a fan-in: one LISTEN connection, a bounded pool", async () => {
    const trees = await Promise.all(
      Array.from({ length: 20 }, async (_, t) => {
        const root = await createTree(db, { name: `root${t}` });
        const children: AgentRow[] = [];
        for (let c = 0; c < 9; c++) children.push(await forkAgent(db, root.id, { name: `c${c}` }));
        return { root, children };
      }),
    );
    expect(trees.flatMap((t) => [t.root, ...t.children])).toHaveLength(200);
    for (const { root, children } of trees) {
      for (const child of children) {
        await sendMail(db, { treeId: root.id, fromId: root.id, toId: child.id, body: "task" });
      }
    }
    expect(bus.channelCount()).toBe(0);

    const { root, children } = trees[0]!;
    const fanIn = waitForMail(db, bus, {
      agentId: root.id,
      timeoutSeconds: 1,
      fromAgents: children.map((c) => c.id),
    });
    // Its own channel only: the children's state changes come there too (CHILD_HINT).
    await vi.waitFor(() => expect(bus.channelCount()).toBe(1));
    const outcome = await fanIn;
    expect("results" in outcome.result && outcome.result.results).toHaveLength(children.length);
    expect(bus.channelCount()).toBe(0);

    const connections = await db.execute<{ listen: number; total: number }>(sql`
      select count(*) filter (where application_name = 'warren-listen')::int as listen,
             count(*)::int as total
        from pg_stat_activity where datname = current_database()`);
    const poolMax = db.$client.options.max;
    expect(connections.rows[0]?.listen).toBe(1);
    expect(connections.rows[0]?.total).toBeLessThanOrEqual(poolMax + 1);
  });
});

describe("subscribing to many channels", () => {
  it("sends their LISTENs without waiting for each answer, at most 32 at once, and a NOTIFY on each is heard", async () => {
    const url = new URL(database().url);
    const proxy = await startPgProxy(url.hostname || "127.0.0.1", Number(url.port || 5432));
    const many = await createBus(proxy.urlFor(database().url));
    try {
      const channels = Array.from({ length: 100 }, (_, i) => `warren_test_many_${i}`);
      const heard = new Set<string>();
      proxy.resetTraffic();
      const off = await many.subscribeAll(channels, (payload) => heard.add(payload));
      // Not 100 round trips one after another (pg's pipeline mode), nor all 100 at once.
      expect(proxy.traffic().mostUnanswered).toBeGreaterThan(1);
      expect(proxy.traffic().mostUnanswered).toBeLessThanOrEqual(32);
      for (const channel of channels) {
        await db.execute(sql`select pg_notify(${channel}, ${channel})`);
      }
      await vi.waitFor(() => expect(heard.size).toBe(channels.length));
      off();
      await vi.waitFor(() => expect(many.channelCount()).toBe(0));
    } finally {
      await many.close();
      await proxy.close();
    }
  });
});
