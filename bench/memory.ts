// Memory and connections with 1,000 agents alive in one process: 1,000 roots, each blocked in a
// `wait` tool call inside its turn, held by one runtime (two worker threads, in this process).
// RSS per live agent beside the idle runtime; the runtime's database connections, and the load the
// waiting agents put on the database, with 1,000 agents beside 10. The fake model runs in a child
// process, so none of its memory is counted.
import { fork, type ChildProcess } from "node:child_process";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import { createTree } from "../src/agents/tree.js";
import type { Config } from "../src/config/config.js";
import { closeDb, createDb, type Db } from "../src/db/client.js";
import { wordWarning } from "../src/db/warning.js";
import { sendMail } from "../src/mail/send.js";
import { startRuntime, type Runtime } from "../src/runtime/pool.js";
import { THREAD_POOL_SIZE } from "../src/runtime/services.js";
import type { HoldModelMessage, HoldModelRequest } from "./hold-model.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { benchConfig, countStates, pollUntil, type StateCounts } from "./rig.js";
import { collectGarbage, forEachLimited, median, nowMs, untilAborted } from "./stats.js";

const AGENTS = 1_000;
const FEW = 10;
const THREADS = 2;
const CONCURRENCY = 1_100;
/** Each agent's `wait` timeout: far longer than the benchmark holds it. */
const HOLD_SECONDS = 600;
const PHASE_TIMEOUT_MS = 300_000;
const POLL_MS = 200;
/**
 * Quiet time before each phase is measured: the last waitForMail subscribes and makes its first
 * check, and Postgres 15 backends gone idle report their statistics up to 10 s late
 * (PGSTAT_IDLE_INTERVAL), so a load window opened sooner would count the ramp's transactions.
 */
const SETTLE_MS = 11_000;
const RSS_SAMPLES = 5;
/** How long the database's transaction rate is watched while agents are held. */
const LOAD_WINDOW_MS = 10_000;
/** Runtime connections are told apart from ours by application_name (src/runtime/services.ts). */
const POOL_APP = "warren-worker";
const LISTEN_APP = "warren-listen";

interface Connections {
  pool: number;
  listen: number;
}

interface Phase {
  rssBytes: number;
  /** The most seen at once while the agents came alive and were held. */
  peak: Connections;
  /** Transactions per second in the database while the agents just wait. */
  idleLoad: number;
}

export async function memory(context: BenchContext): Promise<BenchRow[]> {
  const { url, signal, log } = context;
  const db = createDb(url, { max: 4, applicationName: "warren-bench-memory" });
  const warnings: string[] = [];
  let model: HoldModel | undefined;
  let runtime: Runtime | undefined;
  try {
    model = await HoldModel.start(HOLD_SECONDS, signal);
    const config = benchConfig(model.baseURL);
    runtime = await startRuntime({
      url,
      config,
      threads: THREADS,
      concurrency: CONCURRENCY,
      onWarning: (w) => warnings.push(wordWarning(w)),
    });
    await delay(SETTLE_MS, undefined, { signal });
    // The load window before the RSS, as in every phase: the threads shed startup garbage meanwhile.
    const idleLoad = await transactionRate(db, signal);
    const idle: Phase = {
      rssBytes: await residentBytes(signal),
      peak: await runtimeConnections(db),
      idleLoad,
    };
    log(
      `memory: idle runtime ${formatMiB(idle.rssBytes)}, connections ${JSON.stringify(idle.peak)}, ` +
        `${idleLoad.toFixed(1)} transactions/s`,
    );
    const holders: string[] = [];
    const few = await holdAgents(db, config, holders, FEW, signal, log);
    const many = await holdAgents(db, config, holders, AGENTS, signal, log);
    await release(db, holders, signal, log);
    const stats = await untilAborted(model.stats(), signal);
    if (stats.unmatched > 0 || stats.requests !== 2 * AGENTS) {
      throw new Error(
        `memory: the model saw ${stats.requests} requests (expected ${2 * AGENTS}), ` +
          `${stats.unmatched} unscripted`,
      );
    }
    const total = (c: Connections) => c.pool + c.listen;
    const perAgentKb = (many.rssBytes - idle.rssBytes) / AGENTS / 1024;
    return [
      row(
        `RSS, ${AGENTS} waiting agents`,
        mib(many.rssBytes),
        "MiB",
        "idle runtime",
        mib(idle.rssBytes),
      ),
      row(`RSS per waiting agent`, perAgentKb, "KiB", "48 KiB (goal ceiling, issue 14)", 48),
      row(
        `DB connections, ${AGENTS} waiting agents`,
        total(many.peak),
        "conns",
        `with ${FEW} waiting agents`,
        total(few.peak),
      ),
      // The pools open connections on demand, so with 10 agents they may stop short of their
      // size: what must not grow with agents is the ceiling, which 1,000 agents may reach.
      row(
        `DB connections, ${AGENTS} waiting agents, beside the ceiling`,
        total(many.peak),
        "conns",
        "threads × (pool + listener)",
        THREADS * (THREAD_POOL_SIZE + 1),
      ),
      row(
        `LISTEN connections, ${AGENTS} waiting agents`,
        many.peak.listen,
        "conns",
        `with ${FEW} waiting agents`,
        few.peak.listen,
      ),
      row(
        `DB load, ${AGENTS} waiting agents`,
        many.idleLoad,
        "xact/s",
        `with ${FEW} waiting agents`,
        few.idleLoad,
      ),
    ];
  } finally {
    await runtime?.stop();
    model?.close();
    await closeDb(db);
    if (warnings.length > 0) {
      log(
        `memory: ${warnings.length} runtime warnings, first: ${warnings.slice(0, 3).join(" | ")}`,
      );
    }
  }
}

/**
 * Creates roots until `holders` has `count`, each told to `wait`, and returns once every one is
 * `waiting` (blocked in its tool call) and settled: its RSS, peak connections and database load.
 */
async function holdAgents(
  db: Db,
  config: Config,
  holders: string[],
  count: number,
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<Phase> {
  const start = nowMs();
  const peak: Connections = { pool: 0, listen: 0 };
  const notePeak = async () => {
    const now = await runtimeConnections(db);
    peak.pool = Math.max(peak.pool, now.pool);
    peak.listen = Math.max(peak.listen, now.listen);
  };
  const first = holders.length;
  await forEachLimited(count - first, 4, async (i) => {
    signal.throwIfAborted();
    const root = await createTree(db, {
      name: `holder-${String(first + i).padStart(4, "0")}`,
      prompt: "Wait for mail.",
      model: config.model.name ?? null,
      cwd: process.cwd(),
      budget: config.rootBudget,
    });
    holders.push(root.id);
  });
  let states: StateCounts | undefined;
  await pollUntil(
    db,
    async () => {
      await notePeak();
      states = await countStates(db);
      return states.waiting === count;
    },
    {
      what: `bringing ${count} agents to wait`,
      timeoutMs: PHASE_TIMEOUT_MS,
      intervalMs: POLL_MS,
      signal,
      describe: async () => `agents by state ${JSON.stringify(states)}`,
    },
  );
  const aliveMs = nowMs() - start;
  await delay(SETTLE_MS, undefined, { signal });
  const idleLoad = await transactionRate(db, signal);
  await notePeak();
  const rssBytes = await residentBytes(signal);
  log(
    `memory: ${count} agents waiting after ${(aliveMs / 1000).toFixed(1)} s, ` +
      `RSS ${formatMiB(rssBytes)}, peak connections ${JSON.stringify(peak)}, ` +
      `${idleLoad.toFixed(1)} transactions/s`,
  );
  return { rssBytes, peak, idleLoad };
}

/** Mails every holder, so its wait returns and it answers and goes idle; then all must be idle. */
async function release(
  db: Db,
  holders: string[],
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<void> {
  const start = nowMs();
  await forEachLimited(holders.length, 4, async (i) => {
    signal.throwIfAborted();
    await sendMail(db, { treeId: holders[i]!, fromId: null, toId: holders[i]!, body: "go on" });
  });
  let states: StateCounts | undefined;
  await pollUntil(
    db,
    async () => {
      states = await countStates(db);
      return states.idle === holders.length;
    },
    {
      what: `releasing ${holders.length} waiting agents`,
      timeoutMs: PHASE_TIMEOUT_MS,
      intervalMs: POLL_MS,
      signal,
      describe: async () => `agents by state ${JSON.stringify(states)}`,
    },
  );
  log(`memory: ${holders.length} agents mailed and idle in ${(nowMs() - start).toFixed(0)} ms`);
}

async function runtimeConnections(db: Db): Promise<Connections> {
  const rows = await db.execute<{ app: string; n: number }>(sql`
    select application_name as app, count(*)::int as n from pg_stat_activity
     where datname = current_database() and application_name in (${POOL_APP}, ${LISTEN_APP})
     group by application_name`);
  const of = (app: string) => rows.rows.find((r) => r.app === app)?.n ?? 0;
  return { pool: of(POOL_APP), listen: of(LISTEN_APP) };
}

/** Transactions committed or rolled back per second in this database over LOAD_WINDOW_MS. */
async function transactionRate(db: Db, signal: AbortSignal): Promise<number> {
  const count = async () => {
    const rows = await db.execute<{ n: string }>(sql`
      select xact_commit + xact_rollback as n from pg_stat_database
       where datname = current_database()`);
    return Number(rows.rows[0]?.n ?? 0);
  };
  const before = await count();
  const start = nowMs();
  await delay(LOAD_WINDOW_MS, undefined, { signal });
  const after = await count(); // our own two reads are counted too: 0.2/s, noise
  return (after - before) / ((nowMs() - start) / 1000);
}

/**
 * The process's RSS (main thread, worker threads and native memory alike), median of a few
 * samples after collecting the main thread's garbage; the workers' heaps collect on their own.
 */
async function residentBytes(signal: AbortSignal): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < RSS_SAMPLES; i++) {
    collectGarbage();
    await delay(200, undefined, { signal });
    samples.push(process.memoryUsage.rss());
  }
  return median(samples);
}

const mib = (bytes: number) => bytes / 1024 / 1024;
const formatMiB = (bytes: number) => `${mib(bytes).toFixed(1)} MiB`;

/** The fake model in its child process (bench/hold-model.ts). */
class HoldModel {
  private constructor(
    private readonly child: ChildProcess,
    readonly baseURL: string,
  ) {}

  static async start(holdSeconds: number, signal: AbortSignal): Promise<HoldModel> {
    const script = fileURLToPath(new URL("./hold-model.js", import.meta.url));
    const child = fork(script, [String(holdSeconds)], { execArgv: [], stdio: "inherit" });
    try {
      const message = await untilAborted(nextMessage(child), signal);
      if (message.type !== "listening") throw new Error(`hold-model said ${message.type} first`);
      return new HoldModel(child, message.baseURL);
    } catch (error) {
      child.kill();
      throw error;
    }
  }

  /** Requests answered so far and requests no rule matched. */
  async stats(): Promise<{ requests: number; unmatched: number }> {
    const answer = nextMessage(this.child);
    this.child.send({ type: "stats" } satisfies HoldModelRequest);
    const message = await answer;
    if (message.type !== "stats") throw new Error(`hold-model answered ${message.type}`);
    return message;
  }

  /** Disconnecting tells the child to close its server and exit. */
  close(): void {
    if (this.child.connected) this.child.disconnect();
  }
}

function nextMessage(child: ChildProcess): Promise<HoldModelMessage> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`hold-model exited (${code})`));
    child.once("exit", onExit);
    child.once("message", (message: HoldModelMessage) => {
      child.off("exit", onExit);
      resolve(message);
    });
  });
}
