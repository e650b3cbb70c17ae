// Wake latency: how long after sendMail a keyed waitForMail (as the wait tool makes) blocked on its
// NOTIFY returns the mail, beside the raw floor (INSERT + NOTIFY on one plain client, woken LISTENer
// on another), with 0, 100 and 1,000 other idle agents in the database. Samples of both are
// interleaved so load drift hits both.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { createBus, type Bus } from "../src/bus/bus.js";
import { closeDb, createDb, type Db } from "../src/db/client.js";
import { createTree, forkAgent } from "../src/agents/tree.js";
import { unwatchTree, watchTree } from "../src/feed/watchers.js";
import { sendMail } from "../src/mail/send.js";
import { waitForMail } from "../src/mail/wait.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { collectGarbage, forEachLimited, nowMs, percentile, untilAborted } from "./stats.js";

const WARMUP = 100;
const SAMPLES = 1_000;
const IDLE_LEVELS = [0, 100, 1_000] as const;
/** Idle agents are made in trees of this size: a root and forks below it. */
const IDLE_TREE_SIZE = 10;
const RAW_CHANNEL = "bench_raw_wake";

interface Pair {
  raw: number[];
  warren: number[];
}

export async function wakeLatency(context: BenchContext): Promise<BenchRow[]> {
  const { url, signal, log } = context;
  const waiterDb = createDb(url, { max: 1, applicationName: "warren-bench-waiter" });
  const senderDb = createDb(url, { max: 4, applicationName: "warren-bench-sender" });
  let raw: RawNotify | undefined;
  let bus: Bus | undefined;
  try {
    raw = await RawNotify.open(url);
    bus = await createBus(url);
    const waiter = await createTree(senderDb, { name: "waiter" });
    const sender = await forkAgent(senderDb, waiter.id, { name: "sender", context: "fresh" });
    const probe = createWakeProbe(waiterDb, bus, waiter.id, signal, async (body) => {
      await sendMail(senderDb, {
        treeId: waiter.tree_id,
        fromId: sender.id,
        toId: waiter.id,
        body,
      });
    });

    const rows: BenchRow[] = [];
    const p50ByIdle = new Map<number, number>();
    const rawP50ByIdle = new Map<number, number>();
    let idle = 0;
    for (const level of IDLE_LEVELS) {
      await createIdleAgents(senderDb, level - idle, signal);
      idle = level;
      collectGarbage();
      log(`wake latency: ${level} idle agents, ${WARMUP} warm-up + ${SAMPLES} sends`);
      await samplePairs(WARMUP, raw, probe, signal);
      const { raw: rawMs, warren } = await samplePairs(SAMPLES, raw, probe, signal);
      if (level === 0) {
        rows.push(...(await fiveRuns(rawMs, warren, raw, probe, signal)));
        rows.push(await withFeedOpen(senderDb, raw, probe, signal));
      }
      const rawP50 = percentile(rawMs, 50);
      const rawP99 = percentile(rawMs, 99);
      const p50 = percentile(warren, 50);
      p50ByIdle.set(level, p50);
      rawP50ByIdle.set(level, rawP50);
      rows.push(
        row(`wake p50 (${level} idle)`, p50, "ms", "raw INSERT+NOTIFY p50", rawP50),
        row(
          `wake p99 (${level} idle)`,
          percentile(warren, 99),
          "ms",
          "raw INSERT+NOTIFY p99",
          rawP99,
        ),
      );
    }
    rows.push(
      row(
        `wake p50 1000 idle vs 0 idle`,
        p50ByIdle.get(1_000)!,
        "ms",
        "wake p50 (0 idle)",
        p50ByIdle.get(0)!,
      ),
    );
    // The phases run minutes apart; dividing by each phase's own raw p50 takes out load drift.
    const relative = (level: number) => p50ByIdle.get(level)! / rawP50ByIdle.get(level)!;
    rows.push(
      row(
        `wake p50 ÷ raw, 1000 idle vs 0 idle`,
        relative(1_000),
        "× raw",
        "wake p50 ÷ raw (0 idle)",
        relative(0),
      ),
    );
    return rows;
  } finally {
    await bus?.close();
    await raw?.close();
    await Promise.all([closeDb(waiterDb), closeDb(senderDb)]);
  }
}

/**
 * The wake ratio (p50 ÷ raw p50) of five runs in one invocation, the first being the run in
 * hand, each printed, then their median: one run's ratio moves with the machine's load.
 */
async function fiveRuns(
  rawMs: number[],
  warren: number[],
  raw: RawNotify,
  probe: () => Promise<number>,
  signal: AbortSignal,
): Promise<BenchRow[]> {
  const runs = [{ raw: rawMs, warren }];
  for (let i = 1; i < 5; i++) runs.push(await samplePairs(SAMPLES, raw, probe, signal));
  const ratios = runs.map((r) => percentile(r.warren, 50) / percentile(r.raw, 50));
  const rows = runs.map((r, i) =>
    row(
      `wake p50 (0 idle), run ${i + 1} of 5`,
      percentile(r.warren, 50),
      "ms",
      "raw INSERT+NOTIFY p50",
      percentile(r.raw, 50),
    ),
  );
  const median = [...ratios].sort((x, y) => x - y)[2]!;
  rows.push(row("wake p50 ÷ raw, median of 5 runs", median, "× raw", "goal", 2));
  return rows;
}

/**
 * The wake while a feed is open on another tree (a TUI somewhere): the hint triggers then run on
 * every write (migrations/0019_hints_when_watched.sql), though they NOTIFY only that tree.
 */
async function withFeedOpen(
  db: Db,
  raw: RawNotify,
  probe: () => Promise<number>,
  signal: AbortSignal,
): Promise<BenchRow> {
  const watched = await createTree(db, { name: "watched-elsewhere" });
  const watcher = randomUUID();
  await watchTree(db, watcher, watched.id);
  try {
    await samplePairs(WARMUP, raw, probe, signal);
    const run = await samplePairs(SAMPLES, raw, probe, signal);
    return row(
      "wake p50 (0 idle), a feed open on another tree",
      percentile(run.warren, 50),
      "ms",
      "raw INSERT+NOTIFY p50",
      percentile(run.raw, 50),
    );
  } finally {
    await unwatchTree(db, watcher);
  }
}

async function samplePairs(
  count: number,
  raw: RawNotify,
  probe: () => Promise<number>,
  signal: AbortSignal,
): Promise<Pair> {
  const pair: Pair = { raw: [], warren: [] };
  for (let i = 0; i < count; i++) {
    signal.throwIfAborted();
    pair.raw.push(await raw.roundTrip(signal));
    pair.warren.push(await probe());
  }
  return pair;
}

/**
 * One warren sample: start waitForMail, let it park (subscribed, its first check done and its
 * connection back in the pool), then time sendMail → waitForMail resolving.
 */
function createWakeProbe(
  waiterDb: Db,
  bus: Bus,
  agentId: string,
  signal: AbortSignal,
  send: (body: string) => Promise<void>,
): () => Promise<number> {
  let onSubscribed: (() => void) | undefined;
  const trackedBus: Bus = {
    ...bus,
    async subscribeAll(channels, listener) {
      const off = await bus.subscribeAll(channels, listener);
      onSubscribed?.();
      return off;
    },
  };
  let sequence = 0;
  return async () => {
    // After the subscription, the next release of the waiter's only connection ends its first check.
    const parked = new Promise<void>((resolve) => {
      onSubscribed = () => {
        onSubscribed = undefined;
        waiterDb.$client.once("release", () => setImmediate(resolve));
      };
    });
    // Keyed like the wait tool's call (one result per key): a send hands its mail to the wait.
    const waiting = waitForMail(waiterDb, trackedBus, {
      agentId,
      timeoutSeconds: 120,
      recheckMs: 600_000,
      signal,
      record: { kind: "tool_result", key: `bench-wake:${agentId}:${sequence}` },
    });
    waiting.catch(() => {}); // observed below; an abort while parking must not go unhandled
    await untilAborted(parked, signal);
    const start = nowMs();
    const woke = waiting.then((outcome) => {
      if (!("message" in outcome.result)) throw new Error("waitForMail timed out: mail was lost");
      return nowMs();
    });
    await Promise.all([send(`ping ${sequence++}`), woke]);
    return (await woke) - start;
  };
}

/** Idle agents nobody waits on: trees of a root and forks, created a few at a time. */
async function createIdleAgents(db: Db, count: number, signal: AbortSignal): Promise<void> {
  const trees = Math.ceil(count / IDLE_TREE_SIZE);
  await forEachLimited(trees, 4, async (t) => {
    signal.throwIfAborted();
    const size = Math.min(IDLE_TREE_SIZE, count - t * IDLE_TREE_SIZE);
    const root = await createTree(db, { name: `idle-${t}` });
    for (let i = 1; i < size; i++) {
      await forkAgent(db, root.id, { name: `idle-${t}-${i}`, context: "fresh" });
    }
  });
}

/** The floor: INSERT + NOTIFY in one statement on one plain client, a LISTENing client woken. */
export class RawNotify {
  private pending: (() => void) | undefined;

  private constructor(
    private readonly sender: pg.Client,
    private readonly listener: pg.Client,
  ) {
    listener.on("notification", () => this.pending?.());
  }

  /** `relaxed`: the sender commits without waiting for the WAL flush, as the runtime's sessions. */
  static async open(url: string, options: { relaxed?: boolean } = {}): Promise<RawNotify> {
    const sender = new pg.Client({ connectionString: url, application_name: "bench-raw-send" });
    const listener = new pg.Client({ connectionString: url, application_name: "bench-raw-listen" });
    for (const client of [sender, listener]) client.on("error", () => {});
    try {
      await Promise.all([sender.connect(), listener.connect()]);
      if (options.relaxed) await sender.query("set synchronous_commit = off");
      await sender.query(
        "create table if not exists bench_raw_mail (id bigserial primary key, body text not null)",
      );
      await listener.query(`LISTEN ${RAW_CHANNEL}`);
    } catch (error) {
      await Promise.all([sender.end(), listener.end()]).catch(() => {});
      throw error;
    }
    return new RawNotify(sender, listener);
  }

  /** Milliseconds from just before the INSERT + NOTIFY to the listener's notification. */
  async roundTrip(signal: AbortSignal): Promise<number> {
    const woke = new Promise<number>((resolve) => {
      this.pending = () => {
        this.pending = undefined;
        resolve(nowMs());
      };
    });
    const start = nowMs();
    await this.sender.query(
      `with m as (insert into bench_raw_mail (body) values ($1) returning id)
       select pg_notify('${RAW_CHANNEL}', m.id::text) from m`,
      ["ping"],
    );
    return (await untilAborted(woke, signal)) - start;
  }

  async close(): Promise<void> {
    await Promise.all([this.sender.end(), this.listener.end()]).catch(() => {});
  }
}
