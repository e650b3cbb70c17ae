// Mail throughput: 100 sender → receiver pairs pushing mail through sendMail and waitForMail,
// beside graphile-worker adding and completing as many no-op jobs on the same database.
// Both sides get 10 connections to produce and 10 to consume; rounds alternate so drift hits both.
import pg from "pg";
import {
  Logger,
  makeWorkerUtils,
  run,
  runMigrations,
  type Runner,
  type WorkerUtils,
} from "graphile-worker";
import { createBus, type Bus } from "../src/bus/bus.js";
import { closeDb, createDb, type Db } from "../src/db/client.js";
import { createTree, forkAgent } from "../src/agents/tree.js";
import { sendMail } from "../src/mail/send.js";
import { waitForMail } from "../src/mail/wait.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { collectGarbage, forEachLimited, nowMs, untilAborted } from "./stats.js";

const PAIRS = 100;
const PER_PAIR = 50; // 5,000 messages a round
const WARMUP_PER_PAIR = 5;
const ROUNDS = 3;
const POOL = 10;
const GRAPHILE_SCHEMA = "graphile_worker";

const quiet = new Logger(() => () => {});

interface Pair {
  treeId: string;
  senderId: string;
  receiverId: string;
}

export async function throughput(context: BenchContext): Promise<BenchRow[]> {
  const { url, signal, log } = context;
  const ours = await OursRig.open(url);
  let theirs: GraphileRig | undefined;
  try {
    theirs = await GraphileRig.open(url);
    await ours.round(WARMUP_PER_PAIR, signal);
    await theirs.round(WARMUP_PER_PAIR, signal);
    const oursRates: number[] = [];
    const theirsRates: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      collectGarbage();
      oursRates.push(await ours.round(PER_PAIR, signal));
      collectGarbage();
      theirsRates.push(await theirs.round(PER_PAIR, signal));
      log(
        `throughput round ${r + 1}/${ROUNDS}: warren ${oursRates.at(-1)!.toFixed(0)}/s, ` +
          `graphile-worker ${theirsRates.at(-1)!.toFixed(0)}/s ` +
          `(${(oursRates.at(-1)! / theirsRates.at(-1)!).toFixed(2)}×)`,
      );
    }
    return [
      row(
        `mail throughput (${PAIRS} pairs)`,
        median(oursRates),
        "msg/s",
        "graphile-worker add+complete",
        median(theirsRates),
      ),
    ];
  } finally {
    await theirs?.close();
    await ours.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Our side: each receiver loops on waitForMail while its sender loops on sendMail. */
class OursRig {
  private constructor(
    private readonly sendDb: Db,
    private readonly receiveDb: Db,
    private readonly bus: Bus,
    private readonly pairs: Pair[],
  ) {}

  static async open(url: string): Promise<OursRig> {
    const sendDb = createDb(url, { max: POOL, applicationName: "warren-bench-send" });
    const receiveDb = createDb(url, { max: POOL, applicationName: "warren-bench-receive" });
    try {
      const bus = await createBus(url);
      const pairs: Pair[] = [];
      await forEachLimited(PAIRS, POOL, async (i) => {
        const receiver = await createTree(sendDb, { name: `receiver-${i}` });
        const sender = await forkAgent(sendDb, receiver.id, { name: "sender", context: "fresh" });
        pairs.push({ treeId: receiver.tree_id, senderId: sender.id, receiverId: receiver.id });
      });
      return new OursRig(sendDb, receiveDb, bus, pairs);
    } catch (error) {
      await Promise.all([closeDb(sendDb), closeDb(receiveDb)]);
      throw error;
    }
  }

  /** Messages per second from the first send to the last consume. */
  async round(perPair: number, signal: AbortSignal): Promise<number> {
    const receiving = Promise.all(
      this.pairs.map(async ({ receiverId }) => {
        for (let k = 0; k < perPair; k++) {
          const outcome = await waitForMail(this.receiveDb, this.bus, {
            agentId: receiverId,
            timeoutSeconds: 60,
            signal,
          });
          if (!("message" in outcome.result)) throw new Error("waitForMail timed out");
        }
      }),
    );
    receiving.catch(() => {}); // observed below; a failure meanwhile must not go unhandled
    await untilAborted(this.untilParked(), signal);
    const start = nowMs();
    await Promise.all([
      receiving,
      ...this.pairs.map(async ({ treeId, senderId, receiverId }) => {
        for (let k = 0; k < perPair; k++) {
          signal.throwIfAborted();
          await sendMail(this.sendDb, {
            treeId,
            fromId: senderId,
            toId: receiverId,
            body: `m${k}`,
          });
        }
      }),
    ]);
    return (this.pairs.length * perPair) / ((nowMs() - start) / 1000);
  }

  /** Every receiver subscribed and its first check done: the receiving pool is all idle. */
  private async untilParked(): Promise<void> {
    const pool = this.receiveDb.$client;
    while (
      this.bus.channelCount() < this.pairs.length ||
      pool.waitingCount > 0 ||
      pool.idleCount < pool.totalCount
    ) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  async close(): Promise<void> {
    await this.bus.close();
    await Promise.all([closeDb(this.sendDb), closeDb(this.receiveDb)]);
  }
}

/** graphile-worker's side: worker utils add jobs, a running worker completes them with a no-op task. */
class GraphileRig {
  private completed = 0;
  private onComplete: (() => void) | undefined;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly utils: WorkerUtils,
    private readonly runner: Runner,
  ) {
    runner.events.on("job:complete", () => {
      this.completed++;
      this.onComplete?.();
    });
  }

  static async open(url: string): Promise<GraphileRig> {
    // One pool of ours for both, with an error listener: the scratch database is dropped WITH
    // (FORCE) after the run, and a pool of graphile-worker's that still held an idle client then
    // emitted an unheard 'error' that ended the whole bench.
    const pool = new pg.Pool({ connectionString: url, max: 2 * POOL });
    pool.on("error", () => {});
    const shared = { pgPool: pool, schema: GRAPHILE_SCHEMA, logger: quiet };
    try {
      await runMigrations(shared);
      const utils = await makeWorkerUtils(shared);
      try {
        const runner = await run({
          ...shared,
          concurrency: POOL,
          noHandleSignals: true,
          taskList: { noop: async () => {} },
        });
        return new GraphileRig(pool, utils, runner);
      } catch (error) {
        await utils.release();
        throw error;
      }
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
  }

  /** Jobs per second from the first add to the last completion. */
  async round(perPair: number, signal: AbortSignal): Promise<number> {
    const total = PAIRS * perPair;
    const target = this.completed + total;
    const done = new Promise<void>((resolve) => {
      this.onComplete = () => {
        if (this.completed >= target) resolve();
      };
    });
    const start = nowMs();
    await Promise.all(
      Array.from({ length: PAIRS }, async (_, i) => {
        for (let k = 0; k < perPair; k++) {
          signal.throwIfAborted();
          await this.utils.addJob("noop", { pair: i, k });
        }
      }),
    );
    await untilAborted(done, signal);
    this.onComplete = undefined;
    return total / ((nowMs() - start) / 1000);
  }

  async close(): Promise<void> {
    await this.runner.stop().catch(() => {});
    await this.utils.release();
    await this.pool.end().catch(() => {});
  }
}
