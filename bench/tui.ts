// The TUI, measured on its own screen buffer (a real blessed screen on a fake terminal): opening an
// agent with 10,000 events beside one with 10; keystroke-to-screen latency while 50 agents stream
// (on this process's worker threads, then in a `warren worker` process) beside none; and the delay
// from a model delta leaving the fake server to its text on the screen of a second process (the
// agent runs in a `warren worker` child process).
import { spawn, type ChildProcess } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import pg from "pg";
import type { AgentRow } from "../src/agents/agents.sql.js";
import { DEFAULT_LIMITS } from "../src/agents/limits.js";
import { createTree, forkAgent, killAgent } from "../src/agents/tree.js";
import { createBus, type Bus } from "../src/bus/bus.js";
import { treeChannel } from "../src/bus/channels.js";
import { closeDb, createDb, type Db } from "../src/db/client.js";
import { openFeed } from "../src/feed/feed.js";
import { STREAM_INTERVAL_MS } from "../src/feed/publish.js";
import { sendInput } from "../src/mail/input.js";
import { startRuntime } from "../src/runtime/pool.js";
import { startFakeModel, type FakeModel } from "../test/support/fake-model.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { benchConfig } from "./rig.js";
import { openHarness, stopProcess, type Harness } from "./tui-harness.js";
import { median, nowMs, percentile } from "./stats.js";

const BIG_HISTORY = 10_000;
const SMALL_HISTORY = 10;
const OPEN_ROUNDS = 15;
/**
 * Keys per phase. The p99 of 60 (nearest rank) was the slowest key alone, one descheduling of the
 * TUI's thread by the machine; of 200 it is the second slowest.
 */
const KEYSTROKES = 200;
const STREAMING_AGENTS = 50;
const DELTA_TOKENS = 80;

const CTRL_DOWN = "\x1b[1;5B";
const CTRL_LEFT = "\x1b[1;5D";
const CTRL_RIGHT = "\x1b[1;5C";
const CTRL_U = "\x15";

export async function tuiBench(context: BenchContext): Promise<BenchRow[]> {
  const { url, log } = context;
  process.env.TERM ??= "xterm-256color";
  const db = createDb(url, { max: 4, applicationName: "warren-bench-tui" });
  const bus = await createBus(url);
  const fake = await startFakeModel();
  const rows: BenchRow[] = [];
  try {
    log("tui: opening agents with 10,000 and 10 events");
    rows.push(...(await openTimes(db, bus, fake)));
    log(`tui: keystroke latency, quiet and with ${STREAMING_AGENTS} agents streaming`);
    rows.push(...(await keystrokeLatency(db, bus, fake, url, log)));
    log("tui: model delta → second process's screen");
    rows.push(...(await deltaLatency(db, bus, fake, url, log)));
    return rows;
  } finally {
    await fake.close();
    await bus.close();
    await closeDb(db);
  }
}

/**
 * Returns once the clock has passed the millisecond `agent` was made in. The TUI orders siblings
 * by created_at to the millisecond, then by id (navigation.ts): forks a millisecond apart (one
 * round trip each) would tie, and "the newest child" the bench expects might not be it.
 */
async function nextMillisecond(agent: AgentRow): Promise<void> {
  while (Date.now() <= agent.created_at.getTime()) {
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Ctrl+Left / Ctrl+Right between two siblings, one with 10,000 events and one with 10. */
async function openTimes(db: Db, bus: Bus, fake: FakeModel): Promise<BenchRow[]> {
  const root = await createTree(db, { cwd: os.tmpdir() });
  const small = await forkAgent(db, root.id, { name: "small", context: "fresh" });
  await nextMillisecond(small);
  const big = await forkAgent(db, root.id, { name: "big", context: "fresh" });
  await fillHistory(db, small.id, SMALL_HISTORY, "END-small");
  await fillHistory(db, big.id, BIG_HISTORY, "END-big");
  const h = await openHarness(db, bus, root, fake.baseURL);
  try {
    const visit = async (keys: string, marker: string) => {
      const shown = h.frame((text) => text.includes(marker), marker);
      const start = nowMs();
      h.type(keys);
      return (await shown) - start;
    };
    await visit(CTRL_DOWN, "END-big"); // warm-up: the newest child is "big"
    const bigMs: number[] = [];
    const smallMs: number[] = [];
    for (let i = 0; i < OPEN_ROUNDS; i++) {
      smallMs.push(await visit(CTRL_LEFT, "END-small"));
      bigMs.push(await visit(CTRL_RIGHT, "END-big"));
    }
    return [
      row(
        "tui: open an agent with 10,000 events (p50)",
        median(bigMs),
        "ms",
        "open an agent with 10 events",
        median(smallMs),
      ),
    ];
  } finally {
    await h.close();
  }
}

/** `count` events alternating user / assistant, a few lines each, ending with `marker`. */
async function fillHistory(db: Db, agentId: string, count: number, marker: string) {
  await db.execute(sql`
    insert into events (agent_id, kind, content)
    select ${agentId}::uuid, case when i % 2 = 0 then 'user' else 'assistant' end,
           'message ' || i || E' of a long history\nwith a second line\nand a third one'
      from generate_series(1, ${count - 1}) as i`);
  await db.execute(sql`
    insert into events (agent_id, kind, content) values (${agentId}, 'assistant', ${marker})`);
}

/**
 * Types into a child's input, one key at a time, quiet and then while 50 agents stream: first with
 * the agents on this process's worker threads (as under the real TUI, which lets them yield to its
 * main thread), then with the same load run by a `warren worker` process beside it.
 */
async function keystrokeLatency(
  db: Db,
  bus: Bus,
  fake: FakeModel,
  url: string,
  log: (line: string) => void,
): Promise<BenchRow[]> {
  // Long, slow streams (~20 s of text each, longer than the measurement) from a model server in
  // another process, as a real model server's would be.
  const server = await startStreamingModel();
  const config = benchConfig(server.baseURL, STREAMING_LIMITS);
  try {
    const inProcess = await typingWhileStreaming(db, bus, fake, async (rootId) => {
      const runtime = await startRuntime({
        url,
        config: { ...config, concurrency: STREAMING_AGENTS + 5 },
        treeId: rootId,
        yieldToMain: true,
      });
      return () => runtime.stop();
    });
    const apart = await typingWhileStreaming(db, bus, fake, async () => {
      const worker = startWorker(url, server.baseURL, config.workerThreads);
      await worker.ready;
      return () => stopProcess(worker.process);
    });
    const agents = `${STREAMING_AGENTS} agents streaming`;
    const spread = (samples: number[]) =>
      `p50 ${median(samples).toFixed(2)}, p99 ${percentile(samples, 99).toFixed(2)}, ` +
      `max ${Math.max(...samples).toFixed(2)} ms`;
    for (const [where, run] of [
      ["in process", inProcess],
      ["worker process", apart],
    ] as const) {
      log(
        `tui: keys (${where}): none streaming ${spread(run.quiet)}; ${agents} ${spread(run.streaming)}`,
      );
    }
    return [
      row(
        `tui: keystroke to screen, ${agents} (p50)`,
        median(inProcess.streaming),
        "ms",
        "keystroke to screen, none streaming",
        median(inProcess.quiet),
      ),
      row(
        `tui: keystroke to screen, ${agents} (p99)`,
        percentile(inProcess.streaming, 99),
        "ms",
        "keystroke to screen p99, none streaming",
        percentile(inProcess.quiet, 99),
      ),
      row(
        `tui: keystroke to screen, ${agents} in a worker process (p50)`,
        median(apart.streaming),
        "ms",
        "keystroke to screen, none streaming",
        median(apart.quiet),
      ),
      row(
        `tui: keystroke to screen, ${agents} in a worker process (p99)`,
        percentile(apart.streaming, 99),
        "ms",
        "keystroke to screen p99, none streaming",
        percentile(apart.quiet, 99),
      ),
    ];
  } finally {
    await stopProcess(server.process);
  }
}

const STREAMING_LIMITS = {
  ...DEFAULT_LIMITS,
  maxChildren: STREAMING_AGENTS + 1,
  maxAgentsPerTree: STREAMING_AGENTS + 10,
};

/**
 * A tree of 50 streamers whose agents `startAgents` runs (it returns how to stop them); a TUI on
 * the newest child types while none streams, then while all do. Every child is killed at the end.
 */
async function typingWhileStreaming(
  db: Db,
  bus: Bus,
  fake: FakeModel,
  startAgents: (rootId: string) => Promise<() => Promise<void>>,
): Promise<{ quiet: number[]; streaming: number[] }> {
  const root = await createTree(db, { cwd: os.tmpdir(), model: "fake-model" });
  const children: AgentRow[] = [];
  for (let i = 0; i < STREAMING_AGENTS; i++) {
    const name = `streamer-${String(i).padStart(2, "0")}`;
    children.push(await forkAgent(db, root.id, { name, context: "fresh" }, STREAMING_LIMITS));
    await nextMillisecond(children.at(-1)!);
  }
  const stopAgents = await startAgents(root.id);
  const h = await openHarness(db, bus, root, fake.baseURL);
  try {
    const shown = h.frame((text) => text.includes("[streamer-49"), "the newest child");
    h.type(CTRL_DOWN);
    await shown;
    const quiet = await typeKeys(h);
    for (const child of children) await sendInput(db, child.id, "write a long text");
    await h.frame((text) => text.includes("lorem ipsum dolor"), "a streaming answer");
    const streaming = await typeKeys(h);
    return { quiet, streaming };
  } finally {
    await h.close();
    for (const child of children) await killAgent(db, { targetId: child.id, byAgentId: null });
    await stopAgents();
  }
}

async function startStreamingModel(): Promise<{ baseURL: string; process: ChildProcess }> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), "streaming-model.js");
  const child = spawn(process.execPath, [script], { stdio: ["ignore", "pipe", "inherit"] });
  const baseURL = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      if (out.includes("\n")) resolve(out.split("\n")[0]!.trim());
    });
    child.once("exit", (code) => reject(new Error(`streaming model server exited (${code})`)));
  });
  return { baseURL, process: child };
}

/**
 * Latency of each key, typed by another process with small human-like gaps, from its sending until
 * the input row shows it.
 */
async function typeKeys(h: Harness): Promise<number[]> {
  const samples: number[] = [];
  let typed = "x".repeat(24); // whatever the input holds: cleared first
  for (let i = 0; i < KEYSTROKES; i++) {
    if (typed.length >= 24) {
      const cleared = h.frame(
        (text) => text.includes("❯ \n") || /❯\s*$/m.test(text),
        "a cleared input",
      );
      h.type(CTRL_U);
      await cleared;
      typed = "";
    }
    typed += "abcdefghijklmnopqrstuvwxyz"[i % 26]!;
    const want = `❯ ${typed}`;
    const shown = h.frame((text) => text.includes(want), `"${want}"`);
    const sentAt = await h.typeFromOutside(typed.at(-1)!, 15 + Math.random() * 25);
    samples.push((await shown) - sentAt);
  }
  return samples;
}

/**
 * A root run by a `warren worker` child process; this process's TUI watches its stream. Beside the
 * screen, each token is stamped where it passes: the first NOTIFY on the tree channel heard after
 * the fake server sent it (this process's own LISTEN connection: the writer's coalescing and its
 * statement), the feed's delivery of an update holding it (a second feed on the TUI's bus: the
 * feed's batching and read), and the frame (the TUI's frame clock and paint). The stream's row
 * writes are counted from pg_stat_user_tables.
 */
async function deltaLatency(
  db: Db,
  bus: Bus,
  fake: FakeModel,
  url: string,
  log: (line: string) => void,
): Promise<BenchRow[]> {
  const root = await createTree(db, { cwd: os.tmpdir(), model: "fake-model" });
  const tokens = Array.from({ length: DELTA_TOKENS }, (_, i) => `<${String(i).padStart(3, "0")}>`);
  const sentAt: number[] = [];
  fake.script({
    match: (req) => req.messages.some((m) => m.content === "stream for the bench"),
    reply: {
      text: tokens.join(" "),
      chunkSize: 6,
      chunkDelayMs: 40,
      onChunk: (text: string) => {
        const match = /<(\d{3})>/.exec(text);
        if (match) sentAt[Number(match[1])] = nowMs();
      },
    },
    label: "delta stream",
  });
  const worker = startWorker(url, fake.baseURL, 1);
  const h = await openHarness(db, bus, root, fake.baseURL);
  const heard: number[] = [];
  const hints = { d: 0, w: 0, s: 0 };
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  listener.on("notification", (n) => {
    const tag = n.payload?.[0];
    if (n.channel !== treeChannel(root.id) || n.payload?.[1] !== ":") return;
    if (tag !== "d" && tag !== "w" && tag !== "s") return;
    hints[tag]++;
    heard.push(nowMs());
  });
  await listener.query(`listen "${treeChannel(root.id)}"`);
  const fedAt: number[] = [];
  const feed = await openFeed(db, bus, root.id);
  feed.watchStreams([root.id]);
  feed.subscribe((updates) => {
    const at = nowMs();
    for (const update of updates) {
      if (update.type !== "stream") continue;
      for (const match of update.stream.text.matchAll(/<(\d{3})>/g)) fedAt[Number(match[1])] ??= at;
    }
  });
  const seenAt: number[] = [];
  try {
    const done = h.frame((text) => {
      const at = nowMs();
      for (const match of text.matchAll(/<(\d{3})>/g)) {
        const i = Number(match[1]);
        if (seenAt[i] === undefined) seenAt[i] = at;
      }
      return seenAt[DELTA_TOKENS - 1] !== undefined;
    }, "the whole stream");
    const writesBefore = await streamRowWrites(db);
    await sendInput(db, root.id, "stream for the bench");
    await done;
    const streamMs = sentAt[DELTA_TOKENS - 1]! - sentAt[0]!;
    const deltas = tokens.map((_, i) => i);
    const delays = deltas
      .map((i) => (seenAt[i] ?? NaN) - (sentAt[i] ?? NaN))
      .filter((d) => Number.isFinite(d) && d >= 0);
    // Per stage, for each token: server → first NOTIFY after it, → feed delivery, → frame.
    const stages = { notify: [] as number[], feed: [] as number[], frame: [] as number[] };
    for (const i of deltas) {
      const sent = sentAt[i];
      const fed = fedAt[i];
      const seen = seenAt[i];
      const notified = heard.find((t) => sent !== undefined && t >= sent);
      if (sent === undefined || fed === undefined || seen === undefined || !notified) continue;
      stages.notify.push(notified - sent);
      stages.feed.push(fed - notified);
      stages.frame.push(seen - fed);
    }
    for (const [stage, samples] of Object.entries(stages)) {
      if (samples.length === 0) continue;
      log(
        `tui: delta stage ${stage}: p50 ${median(samples).toFixed(1)} ms, p99 ${percentile(samples, 99).toFixed(1)} ms`,
      );
    }
    // A backend's table stats reach the shared counters when it exits (or ~10 s idle): stop the
    // worker, then read until they settle.
    await stopProcess(worker.process);
    let writes = -1;
    for (let i = 0; i < 20; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const now = (await streamRowWrites(db)) - writesBefore;
      if (now === writes && now > 0) break;
      writes = now;
    }
    const writesPerSecond = (writes * 1000) / streamMs;
    const deltasPerSecond = (DELTA_TOKENS * 1000) / streamMs;
    const statementsPerSecond = ((hints.d + hints.w + hints.s) * 1000) / streamMs;
    log(
      `tui: ${DELTA_TOKENS} deltas in ${Math.round(streamMs)} ms: ${writes} stream row writes; hints heard: ${hints.w} w: (row written), ${hints.d} d: (text only), ${hints.s} s:`,
    );
    const raw = await rawNotifyRoundTrips(url, 50);
    return [
      row(
        "tui: model delta → second process's screen (p50)",
        median(delays),
        "ms",
        "raw INSERT+NOTIFY round trip p50",
        median(raw),
      ),
      row(
        "tui: model delta → second process's screen (p99)",
        percentile(delays, 99),
        "ms",
        "raw INSERT+NOTIFY round trip p99",
        percentile(raw, 99),
      ),
      row(
        `tui: stream row writes per second (${Math.round(deltasPerSecond)} deltas/s)`,
        writesPerSecond,
        "writes/s",
        `the coalescing cap (one per ${STREAM_INTERVAL_MS} ms)`,
        1000 / STREAM_INTERVAL_MS,
      ),
      row(
        "tui: stream statements per second (row writes + text-only hints)",
        statementsPerSecond,
        "stmts/s",
        "model deltas per second",
        deltasPerSecond,
      ),
    ];
  } finally {
    await feed.close();
    await listener.end();
    await h.close();
    await stopProcess(worker.process);
  }
}

/** Rows inserted or updated in agent_streams so far (the stats lag up to a second). */
async function streamRowWrites(db: Db): Promise<number> {
  const result = await db.execute<{ n: string }>(sql`
    select (coalesce(sum(n_tup_ins + n_tup_upd), 0))::text as n
      from pg_stat_user_tables where relname = 'agent_streams'`);
  return Number(result.rows[0]!.n);
}

/** `warren worker` in a child process; `ready` resolves once it says it runs. */
function startWorker(
  url: string,
  modelURL: string,
  threads: number,
): { process: ChildProcess; ready: Promise<void> } {
  const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bin/warren");
  const child = spawn(process.execPath, [bin, "worker", "--threads", String(threads)], {
    env: {
      PATH: process.env.PATH,
      HOME: os.tmpdir(),
      WARREN_CONFIG: path.join(os.tmpdir(), "warren-bench-no-config.json"),
      DATABASE_URL: url,
      OPENAI_BASE_URL: modelURL,
      OPENAI_API_KEY: "bench",
      WARREN_MODEL: "fake-model",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const ready = new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      if (out.includes("worker running")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`warren worker exited (${code})`)));
  });
  ready.catch(() => undefined); // a caller that does not wait for it must not see a rejection
  return { process: child, ready };
}

/** INSERT + NOTIFY on one connection, LISTENed on another: the floor of any feed. */
async function rawNotifyRoundTrips(url: string, count: number): Promise<number[]> {
  const sender = new pg.Client({ connectionString: url });
  const listener = new pg.Client({ connectionString: url });
  await Promise.all([sender.connect(), listener.connect()]);
  try {
    await sender.query("create temp table bench_raw (id serial primary key, v text)");
    await listener.query("listen bench_raw_feed");
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      const heard = new Promise<number>((resolve) =>
        listener.once("notification", () => resolve(nowMs())),
      );
      const start = nowMs();
      await sender.query(
        "with r as (insert into bench_raw (v) values ($1) returning id) " +
          "select pg_notify('bench_raw_feed', id::text) from r",
        [String(i)],
      );
      samples.push((await heard) - start);
    }
    return samples;
  } finally {
    await Promise.all([sender.end(), listener.end()]);
  }
}
