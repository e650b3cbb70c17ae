// openFeed on its own (hints sent by hand, no runtime): order kept within a batch, streams only for
// watched agents, a failed read reported and retried without losing a hint, a lost listener
// turned into a resync, and a throwing subscriber unable to hurt the others.
import pg from "pg";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { createBus, type Bus } from "../../src/bus/bus.js";
import { treeChannel } from "../../src/bus/channels.js";
import { closeDb, createDb, type Db } from "../../src/db/client.js";
import { wordWarning, type Warning } from "../../src/db/warning.js";
import { openFeed } from "../../src/feed/feed.js";
import type { Feed, FeedUpdate } from "../../src/feed/types.js";
import { appendEvent } from "../../src/agents/events.js";
import { recordNotifications } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { until } from "./rig.js";

const database = useTestDatabase();
let db: Db; // the feed's own pool: reads give up after 300 ms (so a lock makes them fail)
let bus: Bus;

beforeAll(async () => {
  const url = new URL(database().url);
  url.searchParams.set("options", "-c statement_timeout=300");
  db = createDb(url.toString(), { applicationName: "warren-feed-test" });
  bus = await createBus(database().url);
});
afterAll(async () => {
  await bus.close();
  await closeDb(db);
});

function collect(feed: Feed) {
  const updates: FeedUpdate[] = [];
  const waiters = new Set<() => void>();
  feed.subscribe((batch) => {
    updates.push(...batch);
    for (const w of [...waiters]) w();
  });
  const until = (what: string, test: (u: FeedUpdate) => boolean, ms = 10_000) =>
    new Promise<FeedUpdate>((resolve, reject) => {
      const check = () => {
        const found = updates.find(test);
        if (!found) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(
          new Error(
            `timed out waiting for ${what}; got ${JSON.stringify(updates.map((u) => u.type))}`,
          ),
        );
      }, ms);
      waiters.add(check);
      check();
    });
  return { updates, until };
}

async function hint(treeId: string, ...payloads: string[]): Promise<void> {
  // One transaction: delivered together, in this order.
  await database().db.transaction(async (tx) => {
    for (const p of payloads) await tx.execute(sql`select pg_notify(${treeChannel(treeId)}, ${p})`);
  });
}

describe("openFeed (hints by hand)", () => {
  it("delivers a batch in hint order and reads streams only of watched agents", async () => {
    const root = await createTree(database().db, { name: "order" });
    const child = await forkAgent(database().db, root.id, { name: "kid" });
    const [forkEvent] = (
      await database().db.execute<{ id: string }>(
        sql`select id from events where agent_id = ${root.id} and kind = 'fork'`,
      )
    ).rows;
    await database().db.execute(sql`
      insert into agent_streams (agent_id, text, reasoning, live)
      values (${root.id}, 'partial answ', 'hmm', true), (${child.id}, 'not watched', '', true)`);
    const feed = await openFeed(db, bus, root.id);
    const seen = collect(feed);
    try {
      feed.watchStreams([root.id]);
      await seen.until("the watched stream", (u) => u.type === "stream");
      seen.updates.length = 0;
      await hint(
        root.id,
        `a:${child.id}`,
        `e:${root.id}:${forkEvent!.id}`,
        `s:${child.id}`,
        `i:${root.id}`,
        `s:${root.id}`,
        `a:${child.id}`, // a repeat collapses into the first
        "junk",
      );
      await seen.until("the stream", (u) => u.type === "stream");
      expect(seen.updates).toMatchObject([
        { type: "agent", agent: { id: child.id, name: "kid" } },
        { type: "event", event: { agent_id: root.id, kind: "fork" } },
        { type: "input", agentId: root.id },
        {
          type: "stream",
          stream: { agentId: root.id, text: "partial answ", reasoning: "hmm", live: true },
        },
      ]);
    } finally {
      await feed.close();
    }
  });

  it("reports a failing read, retries it, and loses no hint; a throwing subscriber harms no one", async () => {
    const root = await createTree(database().db, { name: "faulty" });
    const feed = await openFeed(db, bus, root.id, { retryMs: 50 });
    feed.subscribe(() => {
      throw new Error("a subscriber's bug");
    });
    const seen = collect(feed);
    const locker = new pg.Client({ connectionString: database().url });
    await locker.connect();
    try {
      await locker.query("begin");
      await locker.query("lock table agents in access exclusive mode");
      await hint(root.id, `a:${root.id}`);
      const trouble = await seen.until(
        "a connection problem",
        (u) => u.type === "connection" && u.warning.kind === "outage",
      );
      expect(trouble).toMatchObject({ warning: { kind: "outage" } });
      const { warning } = trouble as { warning: Warning };
      expect(wordWarning(warning)).toMatch(/^database unreachable \(.+\); retrying$/);
      expect(wordWarning(warning)).not.toMatch(/Failed query|select|\n/i);
      expect(seen.updates.some((u) => u.type === "agent")).toBe(false);
      await locker.query("rollback");
      await seen.until(
        "the agent, read on retry",
        (u) => u.type === "agent" && u.agent.id === root.id,
      );
      const types = seen.updates.map((u) =>
        u.type === "connection"
          ? `connection:${u.warning.kind === "outage" ? "bad" : "ok"}`
          : u.type,
      );
      expect(types).toEqual(["connection:bad", "connection:ok", "agent"]);
    } finally {
      await locker.end();
      await feed.close();
    }
  });

  it("makes the tree's writes NOTIFY only while a feed watches it", async () => {
    const root = await createTree(database().db, { name: "watched" });
    const raw = await recordNotifications(bus, [treeChannel(root.id)]);
    const marker = async (label: string) => {
      // NOTIFYs arrive in commit order: once the marker is in, anything sent before it is too.
      await hint(root.id, label);
      await until(`marker ${label}`, async () =>
        raw.payloads(treeChannel(root.id)).includes(label) ? true : undefined,
      );
    };
    try {
      await appendEvent(database().db, root.id, "system", "nobody is watching");
      await marker("m1");
      expect(raw.payloads(treeChannel(root.id))).toEqual(["m1"]);

      const feed = await openFeed(db, bus, root.id);
      const seen = collect(feed);
      const event = await appendEvent(database().db, root.id, "system", "now someone is");
      await seen.until("the event", (u) => u.type === "event" && u.event.id === event.id);
      await feed.close();
      const rows = await database().db.execute(
        sql`select 1 from feed_watchers where tree_id = ${root.id}`,
      );
      expect(rows.rows).toHaveLength(0);

      await appendEvent(database().db, root.id, "system", "gone again");
      await marker("m2");
      expect(raw.payloads(treeChannel(root.id))).toEqual(["m1", `e:${root.id}:${event.id}`, "m2"]);
    } finally {
      raw.stop();
    }
  });

  it("turns a lost listener connection into a resync", async () => {
    const root = await createTree(database().db, { name: "resync" });
    const feed = await openFeed(db, bus, root.id);
    const seen = collect(feed);
    try {
      await database().db.execute(sql`
        select pg_terminate_backend(pid) from pg_stat_activity
         where application_name = 'warren-listen' and datname = current_database()`);
      await seen.until("a resync", (u) => u.type === "resync", 20_000);
      // And it listens again afterwards.
      await hint(root.id, `i:${root.id}`);
      await seen.until("a hint after the reconnect", (u) => u.type === "input");
    } finally {
      await feed.close();
    }
  });
});
