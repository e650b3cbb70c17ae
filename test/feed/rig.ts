// Shared by the feed tests: a real runtime (worker threads, built code) on the test file's database
// with a fake model, and an observer — a second pool and bus, as another process would have —
// whose openFeed updates are recorded and awaited.
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { createBus, type Bus } from "../../src/bus/bus.js";
import { loadConfig, type Config } from "../../src/config/config.js";
import { closeDb, createDb, type Db } from "../../src/db/client.js";
import { openFeed } from "../../src/feed/feed.js";
import type { Feed, FeedUpdate } from "../../src/feed/types.js";
import { startRuntime, type Runtime } from "../../src/runtime/pool.js";
import { useTestDatabase, type TestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";

export interface Observer {
  db: Db;
  bus: Bus;
  feed: Feed;
  /** Every update delivered so far, in delivery order. */
  updates: FeedUpdate[];
  /** How many batches the subscriber received. */
  batches: number;
  /** Resolves with the first update (already delivered or future) that matches. */
  until<T extends FeedUpdate>(
    what: string,
    match: (u: FeedUpdate) => u is T,
    ms?: number,
  ): Promise<T>;
  until(what: string, match: (u: FeedUpdate) => boolean, ms?: number): Promise<FeedUpdate>;
  close(): Promise<void>;
}

export async function openObserver(url: string, treeId: string): Promise<Observer> {
  const db = createDb(url, { applicationName: "warren-observer" });
  const bus = await createBus(url);
  const feed = await openFeed(db, bus, treeId);
  const updates: FeedUpdate[] = [];
  const waiters = new Set<() => void>();
  const observer = {
    db,
    bus,
    feed,
    updates,
    batches: 0,
    until(what: string, match: (u: FeedUpdate) => boolean, ms = 20_000) {
      return new Promise<FeedUpdate>((resolve, reject) => {
        let seen = 0;
        const check = () => {
          for (; seen < updates.length; seen++) {
            if (match(updates[seen]!)) {
              waiters.delete(check);
              clearTimeout(timer);
              resolve(updates[seen]!);
              return;
            }
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`feed: timed out waiting for ${what}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
    async close() {
      await feed.close();
      await bus.close();
      await closeDb(db);
    },
  };
  feed.subscribe((batch) => {
    observer.batches++;
    updates.push(...batch);
    for (const waiter of [...waiters]) waiter();
  });
  return observer as Observer;
}

export interface Rig {
  database(): TestDatabase;
  fake(): FakeModel;
  config(): Config;
}

/** A fake model and a runtime running every tree of this file's database (like `warren worker`). */
export function useRuntime(): Rig {
  const database = useTestDatabase();
  let fake: FakeModel | undefined;
  let runtime: Runtime | undefined;
  let config: Config | undefined;
  beforeAll(async () => {
    fake = await startFakeModel();
    const home = mkdtempSync(path.join(os.tmpdir(), "warren-feed-"));
    config = loadConfig({
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, "config"),
      WARREN_MODEL: "fake",
      OPENAI_BASE_URL: fake.baseURL,
      OPENAI_API_KEY: "test",
      WARREN_WORKER_THREADS: "1",
    });
    config.model.maxRetries = 0;
    runtime = await startRuntime({ url: database().url, config });
  });
  afterAll(async () => {
    await runtime?.stop();
    await fake?.close();
  });
  return {
    database,
    fake: () => fake!,
    config: () => config!,
  };
}

export const isAgent =
  (
    id: string,
    test: (a: Extract<FeedUpdate, { type: "agent" }>["agent"]) => boolean = () => true,
  ) =>
  (u: FeedUpdate): u is Extract<FeedUpdate, { type: "agent" }> =>
    u.type === "agent" && u.agent.id === id && test(u.agent);

export const isEvent =
  (agentId: string, kind: string, test: (content: string) => boolean = () => true) =>
  (u: FeedUpdate): u is Extract<FeedUpdate, { type: "event" }> =>
    u.type === "event" &&
    u.event.agent_id === agentId &&
    u.event.kind === kind &&
    test(u.event.content);

export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}
