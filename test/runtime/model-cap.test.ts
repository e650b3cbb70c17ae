// A model server's capacity, shared (SPEC §3 "Model concurrency"; src/runtime/model-cap.ts): the
// semaphore's rows on the real database (FIFO, a slot bound to its holder's lease), a queued turn
// that shows `queued`, lends its scheduler slot and gives its place back at once when stopped,
// the config key, and a 429's Retry-After pausing the other processes' requests.
import os from "node:os";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { MODEL_SLOT_CHANNEL } from "../../src/bus/channels.js";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { QUEUED_ACTIVITY } from "../../src/feed/types.js";
import { claimNext } from "../../src/runtime/leases.js";
import {
  acquireSlot,
  capFor,
  releaseSlot,
  withModelCap,
  type CapTarget,
} from "../../src/runtime/model-cap.js";
import type { Slot } from "../../src/runtime/run-deps.js";
import { recordNotifications, sleep, useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { fakeTurnDeps } from "../support/turn-deps.js";
import { startWarren, warrenEnv } from "../support/warren.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
let fake: FakeModel;

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(async () => {
  await fake.close();
});

let servers = 0;
/** A server key of its own per test: rows of one test never meet another's. */
function target(cap: number): CapTarget {
  return { key: `http://cap-test-${++servers}.invalid/v1`, cap };
}

/** A running root leased by `owner`: its id and the lease's epoch. */
async function leased(owner: string): Promise<{ id: string; epoch: number }> {
  const { db } = database();
  const root = await createTree(db, { name: owner });
  await db.execute(sql`update agents set state = 'running' where id = ${root.id}`);
  const claimed = await claimNext(db, owner, 30, root.tree_id);
  return { id: root.id, epoch: claimed!.lease_epoch };
}

async function slotRows(key: string) {
  const rows = await database().db.execute<{ agent_id: string; granted: boolean }>(
    sql`select agent_id, granted from model_slots where server = ${key} order by ticket`,
  );
  return rows.rows;
}

describe("the semaphore's rows", () => {
  it("grants up to the cap, queues the rest in order, and hands a freed slot to the oldest", async () => {
    const { db } = database();
    const server = target(2);
    const [a, b, c, d] = await Promise.all(["a", "b", "c", "d"].map((o) => leased(`w-${o}`)));
    const told = await recordNotifications(bus(), [MODEL_SLOT_CHANNEL]);
    const ra = await acquireSlot(db, server, a!.id, a!.epoch, null);
    const rb = await acquireSlot(db, server, b!.id, b!.epoch, null);
    const rc = await acquireSlot(db, server, c!.id, c!.epoch, null);
    const rd = await acquireSlot(db, server, d!.id, d!.epoch, null);
    expect([ra.granted, rb.granted, rc.granted, rd.granted]).toEqual([true, true, false, false]);
    // Uncontended grants are answered directly: no NOTIFY for them.
    await sleep(100);
    expect(told.payloads(MODEL_SLOT_CHANNEL)).toEqual([]);

    await releaseSlot(db, server.key, a!.id, ra.ticket);
    // The oldest waiter (c) has the slot and is told so by its ticket; d still waits.
    await expect.poll(() => told.payloads(MODEL_SLOT_CHANNEL)).toEqual([rc.ticket]);
    expect(await slotRows(server.key)).toEqual([
      { agent_id: b!.id, granted: true },
      { agent_id: c!.id, granted: true },
      { agent_id: d!.id, granted: false },
    ]);
    // d asking again keeps its place and is still refused: the cap holds.
    expect((await acquireSlot(db, server, d!.id, d!.epoch, rd.ticket)).granted).toBe(false);
    told.stop();
  });

  it("a holder whose lease ended (a crash) frees its slot without releasing it", async () => {
    const { db } = database();
    const server = target(1);
    const holder = await leased("crashed");
    const waiter = await leased("alive");
    expect((await acquireSlot(db, server, holder.id, holder.epoch, null)).granted).toBe(true);
    const queued = await acquireSlot(db, server, waiter.id, waiter.epoch, null);
    expect(queued.granted).toBe(false);
    // The holder's process died: nobody heart-beats its lease, which runs out.
    await db.execute(
      sql`update agents set lease_expires_at = now() - interval '1 s' where id = ${holder.id}`,
    );
    const again = await acquireSlot(db, server, waiter.id, waiter.epoch, queued.ticket);
    expect(again.granted).toBe(true);
    expect(await slotRows(server.key)).toEqual([{ agent_id: waiter.id, granted: true }]);
  });

  it("a slot taken under an older epoch does not count once the agent was claimed again", async () => {
    const { db } = database();
    const server = target(1);
    const agent = await leased("first-owner");
    const other = await leased("second");
    expect((await acquireSlot(db, server, agent.id, agent.epoch, null)).granted).toBe(true);
    // Taken over (its lease lapsed): the new epoch's turn starts over; the old slot is void.
    await db.execute(sql`update agents set lease_epoch = lease_epoch + 1 where id = ${agent.id}`);
    expect((await acquireSlot(db, server, other.id, other.epoch, null)).granted).toBe(true);
  });
});

describe("a capped turn", () => {
  it("shows queued, lends its scheduler slot, and gives its place back at once when stopped", async () => {
    const { db } = database();
    const server = fake.baseURL.replace(/\/+$/, "");
    const holder = await leased("holding");
    const agent = await leased("queued-one");
    // The one slot is held elsewhere.
    const held = await acquireSlot(db, { key: server, cap: 1 }, holder.id, holder.epoch, null);
    expect(held.granted).toBe(true);
    const deps = fakeTurnDeps(db, bus(), fake.baseURL, { owner: "queued-one", epoch: agent.epoch });
    deps.config.model.maxConcurrent = { [server]: 1 };
    const lent: string[] = [];
    const slot: Slot = {
      release: () => void lent.push("release"),
      reacquire: async () => void lent.push("reacquire"),
    };
    const stop = new AbortController();
    const model = withModelCap({ ...deps, slot }, agent.id);
    const asked = model.complete({ model: "fake", messages: [], tools: [], signal: stop.signal });
    const failed = asked.catch((err: unknown) => err);
    const activity = async () =>
      (
        await db.execute<{ activity: string | null }>(
          sql`select activity from agents where id = ${agent.id}`,
        )
      ).rows[0]!.activity;
    await expect.poll(activity).toBe(QUEUED_ACTIVITY);
    expect(lent).toEqual(["release"]);
    expect(fake.requests.length).toBe(0);

    stop.abort(new Error("interrupted"));
    expect(await failed).toBeInstanceOf(Error);
    // Its place went with the stop (before the rejection), and the slot it never had stays held.
    expect(await slotRows(server)).toEqual([{ agent_id: holder.id, granted: true }]);
    expect(lent).toEqual(["release", "reacquire"]);
    expect(fake.requests.length).toBe(0);
    await releaseSlot(db, server, holder.id, held.ticket);
  });

  it("takes a freed slot when told, without waiting for the re-check", async () => {
    const { db } = database();
    const server = fake.baseURL.replace(/\/+$/, "");
    const holder = await leased("holder-2");
    const agent = await leased("waiter-2");
    const held = await acquireSlot(db, { key: server, cap: 1 }, holder.id, holder.epoch, null);
    const deps = fakeTurnDeps(db, bus(), fake.baseURL, { owner: "waiter-2", epoch: agent.epoch });
    deps.config.model.maxConcurrent = { [server]: 1 };
    fake.script({ reply: { text: "served" } });
    const model = withModelCap(deps, agent.id);
    const asked = model.complete({
      model: "fake",
      messages: [{ role: "user", content: "hi" }],
      tools: [],
      signal: new AbortController().signal,
    });
    await expect.poll(async () => (await slotRows(server)).length).toBe(2);
    expect(fake.requests.length).toBe(0);
    await releaseSlot(db, server, holder.id, held.ticket);
    // The safety re-check is 15 s away: this answer comes from the NOTIFY.
    expect((await asked).text).toBe("served");
    // The slot is given back once the request ends.
    await expect.poll(() => slotRows(server)).toEqual([]);
  });
});

describe("a capped request that fails", () => {
  it("gives its slot back as a request that succeeds does", async () => {
    const { db } = database();
    const server = fake.baseURL.replace(/\/+$/, "");
    const agent = await leased("failing");
    const deps = fakeTurnDeps(db, bus(), fake.baseURL, { owner: "failing", epoch: agent.epoch });
    deps.config.model.maxConcurrent = { [server]: 1 };
    fake.script({ reply: { status: 400, text: "no such thing" } });
    const model = withModelCap(deps, agent.id);
    const asked = model.complete({
      model: "fake",
      messages: [{ role: "user", content: "hi" }],
      tools: [],
      signal: new AbortController().signal,
    });
    await expect(asked).rejects.toThrow(/400/);
    await expect.poll(() => slotRows(server)).toEqual([]);
  });
});

describe("max_concurrent_requests in the config", () => {
  const config = (value: unknown, env: Record<string, string> = {}) => {
    const dir = path.join(os.tmpdir(), `warren-cap-${process.pid}-${++servers}`);
    const file = `${dir}.json`;
    writeFileSync(file, JSON.stringify({ max_concurrent_requests: value }));
    return loadConfig({ HOME: os.tmpdir(), WARREN_CONFIG: file, ...env }, os.tmpdir());
  };

  it("a number caps the configured server; an object caps servers or models", () => {
    const byServer = config(4, { OPENAI_BASE_URL: "http://127.0.0.1:8080/v1/" });
    expect(capFor(byServer.model, "qwen")).toEqual({ key: "http://127.0.0.1:8080/v1", cap: 4 });
    const byModel = config(
      { "qwen3:8b": 2, "http://127.0.0.1:8080/v1": 6 },
      { OPENAI_BASE_URL: "http://127.0.0.1:8080/v1" },
    );
    expect(capFor(byModel.model, "qwen3:8b")).toEqual({
      key: "http://127.0.0.1:8080/v1 qwen3:8b",
      cap: 2,
    });
    expect(capFor(byModel.model, "other")).toEqual({ key: "http://127.0.0.1:8080/v1", cap: 6 });
    const elsewhere = config({ "http://elsewhere/v1": 1 });
    expect(capFor(elsewhere.model, "gpt")).toBeUndefined();
  });

  it("bad values are refused in one line naming the key", () => {
    expect(() => config(0)).toThrow(ConfigError);
    expect(() => config(1.5)).toThrow(/max_concurrent_requests must be a whole number/);
    expect(() => config({ m: "2" })).toThrow(/max_concurrent_requests\.m must be a whole number/);
    expect(() => config([2])).toThrow(/max_concurrent_requests must be a number or/);
  });

  it("without the key a turn's model is the model itself: nothing added", () => {
    const deps = fakeTurnDeps(database().db, bus(), fake.baseURL, { owner: "x", epoch: 1 });
    expect(deps.config.model.maxConcurrent).toBeUndefined();
    expect(withModelCap(deps, "00000000-0000-0000-0000-000000000000")).toBe(deps.model);
  });
});

describe("a 429 with Retry-After", () => {
  it("pauses the server's requests in every process, not just the one that got it", async () => {
    const { db, url } = database();
    const local = await startFakeModel();
    try {
      const server = local.baseURL.replace(/\/+$/, "");
      const configFile = path.join(os.tmpdir(), `warren-cap-429-${process.pid}.json`);
      writeFileSync(configFile, JSON.stringify({ max_concurrent_requests: 4 }));
      const first = (req: { lastMessage?: { content?: unknown } }) =>
        String(req.lastMessage?.content ?? "").includes("first");
      local.script([
        { match: first, reply: { status: 429, retryAfterSeconds: 2, text: "slow down" } },
        { match: first, reply: { text: "first done" } },
        { reply: { text: "second done" } },
      ]);
      const env = () =>
        warrenEnv({
          databaseUrl: url,
          modelUrl: local.baseURL,
          extra: { WARREN_CONFIG: configFile },
        });
      const one = startWarren(["-p", "first", "--json", "--timeout", "60"], env());
      // The 429 was answered (asking for 2 s): from then on the server is paused for everyone.
      await expect.poll(() => local.requests.length, { timeout: 30_000 }).toBeGreaterThan(0);
      const refusedAt = local.requests[0]!.receivedAt;
      // Another process, started during the pause: its agent waits, shown as queued.
      const two = startWarren(["-p", "second", "--json", "--timeout", "60"], env());
      const queued = expect
        .poll(
          async () =>
            (
              await db.execute<{ n: number }>(
                sql`select count(*)::int as n from agents where activity = ${QUEUED_ACTIVITY}`,
              )
            ).rows[0]!.n,
          { timeout: 30_000, interval: 50 },
        )
        .toBeGreaterThan(0);
      await queued;
      const [ran1, ran2] = await Promise.all([one.done, two.done]);
      expect(ran1.code, ran1.stderr).toBe(0);
      expect(ran2.code, ran2.stderr).toBe(0);
      expect(JSON.parse(ran2.stdout)).toMatchObject({ text: "second done" });
      // Every request after the 429, the other process's too, reached the server after the
      // 2 s it asked for; the pause is on the server's row.
      const after429 = local.requests.slice(1);
      expect(after429.length).toBe(2);
      for (const req of after429) expect(req.receivedAt).toBeGreaterThanOrEqual(refusedAt + 2000);
      const paused = await db.execute(
        sql`select 1 from model_servers where key = ${server} and paused_until is not null`,
      );
      expect(paused.rows.length).toBe(1);
    } finally {
      await local.close();
    }
  }, 90_000);
});
