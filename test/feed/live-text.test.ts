// Live text on a real database, the publisher and the feed each on its own: the first delta
// written at once and the rest sent as hints carrying their text (the row written no more than
// once per interval), a stale lease refused in the statement itself; and a feed that applies
// payload-carried deltas in order and catches up from the row when a hint was lost.
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { createBus, type Bus } from "../../src/bus/bus.js";
import { treeChannel } from "../../src/bus/channels.js";
import { openFeed } from "../../src/feed/feed.js";
import { createStreamPublisher } from "../../src/feed/publish.js";
import { deltaPayloadTail, parseStreamHint } from "../../src/feed/stream-hints.js";
import { watchTree } from "../../src/feed/watchers.js";
import { readPass } from "../../src/runtime/pass-read.js";
import type { FeedUpdate, StreamSnapshot } from "../../src/feed/types.js";
import { recordNotifications } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { until } from "./rig.js";

const database = useTestDatabase();
let bus: Bus;
beforeAll(async () => {
  bus = await createBus(database().url);
});
afterAll(async () => {
  await bus.close();
});

/** A root whose stream a (hand-registered) feed watches, and its tree channel's hints. */
async function watchedRoot(name: string) {
  const { db } = database();
  const root = await createTree(db, { name });
  await watchTree(db, randomUUID(), root.tree_id, [root.id]);
  const raw = await recordNotifications(bus, [treeChannel(root.tree_id)]);
  const hints = () => raw.payloads(treeChannel(root.tree_id)).map((p) => parseStreamHint(p)!);
  return { root, raw, hints };
}

async function row(agentId: string) {
  const rows = await database().db.execute<{ text: string; response: string }>(
    sql`select text, response::text from agent_streams where agent_id = ${agentId}`,
  );
  return rows.rows[0];
}

describe("the stream publisher", () => {
  it("writes the row on the first delta at once, then sends the text in hints, in order", async () => {
    const { root, raw, hints } = await watchedRoot("leading");
    // An interval longer than the test: after the first write, no row write is due.
    const publisher = createStreamPublisher(database().db, root, { intervalMs: 3_600_000 });
    try {
      publisher.onText("The ");
      const first = await until("the first hint", async () => hints()[0]);
      expect(first).toMatchObject({ kind: "delta", written: true, textAt: 0, text: "The " });
      expect(await row(root.id)).toMatchObject({ text: "The " });
      // What comes while a statement is in flight goes in the next one: fewer hints than deltas.
      const words = ["quick ", "brown ", "fox ", "jumps ", "over ", "the ", "lazy ", "dog."];
      for (const word of words) publisher.onText(word);
      const answer = `The ${words.join("")}`;
      const all = await until("the whole text in hints", async () => {
        const got = hints();
        const last = got.at(-1);
        return last?.kind === "delta" && last.textAt + last.text.length === answer.length
          ? got
          : undefined;
      });
      let text = "";
      for (const hint of all) {
        if (hint.kind !== "delta") throw new Error(`unexpected ${hint.kind} hint`);
        expect(hint.textAt).toBe(text.length); // each continues the one before
        expect(hint.response).toBe(first.kind === "delta" ? first.response : -1);
        text += hint.text;
      }
      expect(text).toBe(answer);
      expect(all.length).toBeLessThanOrEqual(words.length + 1);
      // Only the first was a row write: the row still holds the first delta.
      expect(all.filter((h) => h.kind === "delta" && h.written)).toHaveLength(1);
      expect(await row(root.id)).toMatchObject({ text: "The " });
    } finally {
      await publisher.settle();
      raw.stop();
    }
  });

  it("brings the row up to date once the stream is quiet, and numbers each response", async () => {
    const { root, raw, hints } = await watchedRoot("trailing");
    const first = createStreamPublisher(database().db, root, { intervalMs: 20 });
    for (const delta of ["one ", "two ", "three"]) first.onText(delta);
    await until("the row caught up", async () =>
      (await row(root.id))?.text === "one two three" ? true : undefined,
    );
    await first.settle();
    const firstResponse = (await row(root.id))!.response;
    const second = createStreamPublisher(database().db, root, { intervalMs: 20 });
    second.onText("again");
    await until("the second response's row", async () =>
      (await row(root.id))?.text === "again" ? true : undefined,
    );
    await second.settle();
    expect(BigInt((await row(root.id))!.response)).toBeGreaterThan(BigInt(firstResponse));
    expect(hints().every((h) => h.kind === "delta")).toBe(true);
    raw.stop();
  });

  it("asks whether anyone watches an unwatched stream once per five intervals, not each", async () => {
    const { db } = database();
    const root = await createTree(db, { name: "unwatched" });
    // Counts the row writes (each asks whether a feed watches) this publisher sends.
    let asked = 0;
    const pool = db.$client;
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    pool.query = ((...args: unknown[]) => {
      if ((args[0] as { name?: string })?.name === "warren_stream_row") asked++;
      return query(...args);
    }) as typeof pool.query;
    const intervalMs = 20;
    const publisher = createStreamPublisher(db, root, { intervalMs });
    const started = Date.now();
    for (let i = 0; i < 30; i++) {
      publisher.onText(`${i} `);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const elapsed = Date.now() - started;
    await publisher.settle();
    pool.query = query as typeof pool.query;
    // Never more often than once per 5 intervals (the first at once); each interval would be
    // about three times as many.
    expect(asked).toBeGreaterThan(0);
    expect(asked).toBeLessThanOrEqual(Math.floor(elapsed / (5 * intervalMs)) + 1);
    expect(await row(root.id)).toBeUndefined();
  });

  it("told by the turn's read that nobody watches, asks nothing for a short answer", async () => {
    const { db } = database();
    const unwatched = await createTree(db, { name: "short-answer" });
    const { root: watched, raw } = await watchedRoot("short-watched");
    // What the turn's pass read says of each (the publisher is told it, not asking itself).
    expect((await readPass(db, unwatched.id, false))?.watched).toBe(false);
    expect((await readPass(db, watched.id, false))?.watched).toBe(true);
    const asked = new Map<string, number>();
    const pool = db.$client;
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    pool.query = ((...args: unknown[]) => {
      const [statement, values] = args as [
        { name?: string; values?: unknown[] },
        unknown[] | undefined,
      ];
      if (statement?.name === "warren_stream_row") {
        const agent = String((statement.values ?? values)?.[0]);
        asked.set(agent, (asked.get(agent) ?? 0) + 1);
      }
      return query(...args);
    }) as typeof pool.query;
    const quiet = createStreamPublisher(db, unwatched, { intervalMs: 20, unwatched: true });
    const seen = createStreamPublisher(db, watched, { intervalMs: 20, unwatched: false });
    for (const publisher of [quiet, seen]) publisher.onText("a short answer");
    await Promise.all([quiet.settle(), seen.settle()]);
    pool.query = query as typeof pool.query;
    // The short answer is done before the unwatched stream's first ask is due.
    expect(asked.get(unwatched.id) ?? 0).toBe(0);
    expect(asked.get(watched.id)).toBe(1);
    expect((await row(watched.id))?.text).toBe("a short answer");
    raw.stop();
  });

  it("sends and writes nothing under a stale lease epoch, and says so", async () => {
    const { root, raw } = await watchedRoot("fenced");
    let fenced = 0;
    const publisher = createStreamPublisher(database().db, root, {
      fence: { owner: "someone-else", epoch: 999 },
      onFenced: () => fenced++,
    });
    publisher.onText("should not show");
    await until("the refusal", async () => (fenced > 0 ? true : undefined));
    await publisher.settle();
    expect(raw.received).toEqual([]);
    expect(await row(root.id)).toBeUndefined();
    raw.stop();
  });
});

describe("a feed fed text in hints", () => {
  async function openWatching(agentId: string, treeId: string) {
    const feed = await openFeed(database().db, bus, treeId);
    const streams: StreamSnapshot[] = [];
    const all: FeedUpdate[] = [];
    feed.subscribe((updates) => {
      all.push(...updates);
      for (const u of updates) if (u.type === "stream") streams.push(u.stream);
    });
    feed.watchStreams([agentId]);
    // The watch is registered and the (missing) row read once the read of it is done.
    await until("the watch", async () => {
      const rows = await database().db.execute<{ n: number }>(sql`
        select count(*)::int as n from feed_watchers where ${agentId}::uuid = any(streams)`);
      return rows.rows[0]!.n > 0 ? true : undefined;
    });
    return { feed, streams, all };
  }

  const send = async (treeId: string, ...payloads: string[]) => {
    for (const p of payloads)
      await database().db.execute(sql`select pg_notify(${treeChannel(treeId)}, ${p})`);
  };
  const d = (agentId: string, response: number, textAt: number, text: string) =>
    `d:${agentId}:${response}:${deltaPayloadTail({ textAt, reasoningAt: 0, text, reasoning: "" })}`;

  it("applies the deltas in order without reading, and ends the stream", async () => {
    const root = await createTree(database().db, { name: "in order" });
    const { feed, streams } = await openWatching(root.id, root.tree_id);
    try {
      await send(
        root.tree_id,
        d(root.id, 7, 0, "Hel"),
        d(root.id, 7, 3, "lo, "),
        d(root.id, 7, 7, "world"),
        `s:${root.id}:7:end`,
      );
      await until("the end", async () => (streams.some((s) => !s.live) ? true : undefined));
      // Each delivered state continues the one before (hints that arrive before a batch is told
      // collapse into one state, the end with them); the last has every delta and is ended.
      const texts = streams.map((s) => s.text);
      for (let i = 1; i < texts.length; i++) expect(texts[i]!.startsWith(texts[i - 1]!)).toBe(true);
      expect(streams.filter((s) => !s.live)).toHaveLength(1);
      expect(streams.at(-1)).toMatchObject({ text: "Hello, world", live: false });
    } finally {
      await feed.close();
    }
  });

  it("catches up from the row when a hint was lost", async () => {
    const root = await createTree(database().db, { name: "lossy" });
    const { feed, streams } = await openWatching(root.id, root.tree_id);
    try {
      await send(root.tree_id, d(root.id, 7, 0, "Hel"));
      await until("the first delta", async () =>
        streams.at(-1)?.text === "Hel" ? true : undefined,
      );
      // "lo, " is lost on its way; the row (the truth) has it.
      await database().db.execute(sql`
        insert into agent_streams (agent_id, tree_id, text, reasoning, live, response)
        values (${root.id}, ${root.tree_id}, 'Hello, world', '', true, 7)`);
      await send(root.tree_id, d(root.id, 7, 7, "world"));
      await until("the text from the row", async () =>
        streams.at(-1)?.text === "Hello, world" ? true : undefined,
      );
      // Later deltas go on from there.
      await send(root.tree_id, d(root.id, 7, 12, "!"));
      await until("the next delta", async () =>
        streams.at(-1)?.text === "Hello, world!" ? true : undefined,
      );
      // A late hint of an older response changes nothing.
      await send(root.tree_id, d(root.id, 6, 0, "old"), d(root.id, 7, 13, "?"));
      await until("the last delta", async () =>
        streams.at(-1)?.text === "Hello, world!?" ? true : undefined,
      );
      expect(streams.some((s) => s.text.includes("old"))).toBe(false);
    } finally {
      await feed.close();
    }
  });
});
