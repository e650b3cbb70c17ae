// The hint triggers run only while a feed is open (migrations/0019_hints_when_watched.sql,
// src/feed/watchers.ts): off with no feed, on from the first registration, off again when the
// last one closes; turning them on waits for the writes in flight, so none commits unhinted
// after it, and holds other writers up only for a short lock wait; with them on already, a feed
// hears of a write older than its registration that commits after its first read; a worker's
// scheduler turns them off once a crashed feed's registration expires (0020); and a role that
// only reads and writes the tables can open a feed.
import { randomBytes, randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { treeChannel } from "../../src/bus/channels.js";
import { createBus } from "../../src/bus/bus.js";
import { closeDb, createDb } from "../../src/db/client.js";
import { openFeed } from "../../src/feed/feed.js";
import type { FeedUpdate } from "../../src/feed/types.js";
import { unwatchTree, watchTree } from "../../src/feed/watchers.js";
import { loadConfig } from "../../src/config/config.js";
import { createOpenAIModel } from "../../src/llm/openai.js";
import { startScheduler } from "../../src/runtime/scheduler.js";
import { useTestDatabase } from "../support/db.js";
import { until } from "./rig.js";

const database = useTestDatabase();

const HINT_TRIGGERS = [
  "agents_feed_insert",
  "agents_feed_update",
  "events_feed_insert",
  "mail_feed_input",
];

/** The hint triggers that are enabled, by name. */
async function enabled(): Promise<string[]> {
  const rows = await database().db.execute<{ name: string }>(sql`
    select tgname as name from pg_trigger
     where tgname in (${sql.join(
       HINT_TRIGGERS.map((t) => sql`${t}`),
       sql`, `,
     )})
       and tgenabled <> 'D'
     order by tgname`);
  return rows.rows.map((r) => r.name);
}

/** A `system` event of `agentId` written on `client` (in its transaction, if one is open). */
async function writeEvent(client: pg.Client, agentId: string, content: string): Promise<string> {
  const { rows } = await client.query<{ id: string }>(
    `insert into events (agent_id, kind, content) values ($1, 'system', $2) returning id`,
    [agentId, content],
  );
  return rows[0]!.id;
}

async function connected(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  await client.connect();
  return client;
}

describe("the hint triggers", () => {
  it("are off with no feed, on while one is registered, off when the last one closes", async () => {
    expect(await enabled()).toEqual([]);
    const root = await createTree(database().db, { name: "watched" });
    const [a, b] = [randomUUID(), randomUUID()];
    await watchTree(database().db, a, root.id);
    expect(await enabled()).toEqual(HINT_TRIGGERS);
    await watchTree(database().db, b, root.id);
    await unwatchTree(database().db, a);
    expect(await enabled()).toEqual(HINT_TRIGGERS);
    await unwatchTree(database().db, b);
    expect(await enabled()).toEqual([]);
  });

  it("do not stay on for a registration that expired (a feed that crashed)", async () => {
    const root = await createTree(database().db, { name: "crashed" });
    const [crashed, other] = [randomUUID(), randomUUID()];
    await watchTree(database().db, crashed, root.id);
    await database().db.execute(
      sql`update feed_watchers set expires_at = now() - interval '1 second' where id = ${crashed}`,
    );
    await watchTree(database().db, other, root.id);
    await unwatchTree(database().db, other);
    expect(await enabled()).toEqual([]);
  });

  it("are turned off by a worker's scheduler once a crashed feed's registration expires", async () => {
    const { db, url } = database();
    const root = await createTree(db, { name: "crashed-alone" });
    const crashed = randomUUID();
    await watchTree(db, crashed, root.id);
    const bus = await createBus(url);
    const scheduler = await startScheduler(
      {
        db,
        bus,
        model: createOpenAIModel({ baseURL: "http://127.0.0.1:9/v1", maxRetries: 0 }),
        config: loadConfig({ XDG_CONFIG_HOME: "/nonexistent" }),
      },
      { concurrency: 1, leaseSeconds: 10, treeId: root.id, hintSweepMs: 50 },
    );
    try {
      // While the registration lives, the sweeps leave the hints on.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await enabled()).toEqual(HINT_TRIGGERS);
      // The feed's process died: nothing closes it, and no other feed opens or closes.
      await db.execute(
        sql`update feed_watchers set expires_at = now() - interval '1 second' where id = ${crashed}`,
      );
      await until("the sweep", async () => ((await enabled()).length === 0 ? true : undefined));
    } finally {
      await scheduler.stop();
      await bus.close();
    }
  });

  it("go on only after the writes in flight commit; every later write hints", async () => {
    const { url } = database();
    const root = await createTree(database().db, { name: "in-flight" });
    const writer = await connected(url);
    const listener = await connected(url);
    const hints: string[] = [];
    listener.on("notification", (n) => hints.push(n.payload ?? ""));
    await listener.query(`LISTEN "${treeChannel(root.id)}"`);
    const watcher = randomUUID();
    try {
      // A write begun while the triggers are off: it sends no hint.
      await writer.query("begin");
      await writeEvent(writer, root.id, "before");
      let registered = false;
      const registering = watchTree(database().db, watcher, root.id).then(() => {
        registered = true;
      });
      // Several of the registration's lock waits (200 ms each) go by: it is still waiting.
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(registered).toBe(false);
      await writer.query("commit");
      await registering;
      // So the unhinted write committed before the feed could read: its first read sees it.
      const seen = await database().db.execute(
        sql`select 1 from events where agent_id = ${root.id} and content = 'before'`,
      );
      expect(seen.rows).toHaveLength(1);
      // And a write after the registration hints.
      const after = await writeEvent(writer, root.id, "after");
      await listener.query("select 1"); // a round trip: a NOTIFY sent before it has arrived
      const hinted = `e:${root.id}:${after}`;
      await until("the hint", async () => hints.includes(hinted) || undefined, 10_000);
      expect(hints).toEqual([`e:${root.id}:${after}`]);
    } finally {
      await writer.query("rollback").catch(() => {});
      await unwatchTree(database().db, watcher);
      await Promise.all([writer.end(), listener.end()]);
    }
  });

  it("hold other writers up for at most a short lock wait while they wait for one", async () => {
    const { url } = database();
    const root = await createTree(database().db, { name: "held-up" });
    const [slow, quick] = [await connected(url), await connected(url)];
    const watcher = randomUUID();
    try {
      await slow.query("begin");
      await writeEvent(slow, root.id, "slow");
      // Turning the triggers on waits for the slow write; writers that come meanwhile queue
      // behind that wait only until its lock timeout ends it, not until the slow one commits.
      const registering = watchTree(database().db, watcher, root.id);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const quickWrite = writeEvent(quick, root.id, "quick");
      const outcome = await Promise.race([
        quickWrite.then(() => "written"),
        new Promise((resolve) => setTimeout(() => resolve("still queued"), 5_000)),
      ]);
      expect(outcome).toBe("written");
      await slow.query("commit");
      await registering;
      expect(await enabled()).toEqual(HINT_TRIGGERS);
    } finally {
      await slow.query("rollback").catch(() => {});
      await unwatchTree(database().db, watcher);
      await Promise.all([slow.end(), quick.end()]);
    }
  });

  it("on already: a write begun before a feed registered and committed after its first read resyncs it", async () => {
    const { url } = database();
    const elsewhere = await createTree(database().db, { name: "elsewhere" });
    const root = await createTree(database().db, { name: "late-writer" });
    const other = randomUUID();
    await watchTree(database().db, other, elsewhere.id); // a TUI on another tree: hints on
    const writer = await connected(url);
    const bus = await createBus(url);
    try {
      // Its trigger runs now, while no feed watches this tree: it sends no hint.
      await writer.query("begin");
      await writeEvent(writer, root.id, "unhinted");
      // The feed waits a second for it, then opens (and reads) without it.
      const feed = await openFeed(database().db, bus, root.id);
      const updates: FeedUpdate[] = [];
      feed.subscribe((batch) => updates.push(...batch));
      try {
        await writer.query("commit");
        await until(
          "a resync",
          async () => updates.some((u) => u.type === "resync") || undefined,
          10_000,
        );
        expect(updates.map((u) => u.type)).toContain("resync");
      } finally {
        await feed.close();
      }
    } finally {
      await writer.query("rollback").catch(() => {});
      await unwatchTree(database().db, other);
      await bus.close();
      await writer.end();
    }
  });

  it("can be turned on by a role that may only read and write the tables", async () => {
    const { url } = database();
    const role = `warren_t_rw_${randomBytes(4).toString("hex")}`;
    const password = randomBytes(12).toString("hex");
    const admin = await connected(url);
    await admin.query(`create role "${role}" login password '${password}'`);
    await admin.query(`grant usage on schema public to "${role}"`);
    await admin.query(
      `grant select, insert, update, delete on all tables in schema public to "${role}"`,
    );
    await admin.query(`grant usage on all sequences in schema public to "${role}"`);
    // Warren's functions are not PUBLIC's (migration 0021): its roles are granted them.
    await admin.query(`grant execute on all functions in schema public to "${role}"`);
    const asRole = new URL(url);
    asRole.username = role;
    asRole.password = password;
    const db = createDb(asRole.toString());
    try {
      const root = await createTree(database().db, { name: "least-privilege" });
      const watcher = randomUUID();
      await watchTree(db, watcher, root.id);
      expect(await enabled()).toEqual(HINT_TRIGGERS);
      await unwatchTree(db, watcher);
      expect(await enabled()).toEqual([]);
    } finally {
      await closeDb(db);
      await admin.query(`drop owned by "${role}"`);
      await admin.query(`drop role "${role}"`);
      await admin.end();
    }
  });
});
