// The TUI, measured on its own screen buffer (a real blessed screen on a fake terminal): opening an
// agent with 10,000 events beside one with 10; keystroke-to-screen latency while 50 agents stream
// (on this process's worker threads, then in a `warren worker` process) beside none; and the delay
// from a model delta leaving the fake server to its text on the screen of a second process (the
// agent runs in a `warren worker` child process).
import { spawn, type ChildProcess } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import pg from "pg";
import type { AgentRow } from "../src/agents/agents.sql.js";
import { DEFAULT_LIMITS } from "../src/agents/limits.js";
import { createTree, forkAgent, killAgent } from "../src/agents/tree.js";
import { createBus, type Bus } from "../src/bus/bus.js";
import { closeDb, createDb, type Db } from "../src/db/client.js";
import { sendInput } from "../src/mail/input.js";
import { startRuntime } from "../src/runtime/pool.js";
import { startTui, type Tui } from "../src/ui/app.js";
import { startFakeModel, type FakeModel } from "../test/support/fake-model.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { benchConfig } from "./rig.js";
import { median, nowMs, percentile } from "./stats.js";

const COLS = 120;
const ROWS = 40;
const BIG_HISTORY = 10_000;
const SMALL_HISTORY = 10;
const OPEN_ROUNDS = 15;
const KEYSTROKES = 60;
const STREAMING_AGENTS = 50;
const DELTA_TOKENS = 80;
const FRAME_TIMEOUT_MS = 10_000;

const CTRL_DOWN = "\x1b[1;5B";
const CTRL_LEFT = "\x1b[1;5D";
const CTRL_RIGHT = "\x1b[1;5C";
const CTRL_U = "\x15";

/** A TUI on a fake terminal, with a way to await a frame whose text satisfies a check. */
interface Harness {
  tui: Tui;
  type(keys: string): void;
  /**
   * Has another process type `key` after `delayMs`, as a person's keystroke arrives: the TUI's
   * thread must wake for it. Resolves with the time (nowMs, one clock for all processes) it was sent.
   */
  typeFromOutside(key: string, delayMs: number): Promise<number>;
  /** Resolves with the time (nowMs) of the first frame, from now on, for which `check` holds. */
  frame(check: (text: string) => boolean, what: string): Promise<number>;
  close(): Promise<void>;
}

async function openHarness(db: Db, bus: Bus, root: AgentRow, modelURL: string): Promise<Harness> {
  const stdin = new PassThrough() as PassThrough & { isTTY: boolean };
  stdin.isTTY = false;
  const stdout = new PassThrough() as PassThrough & {
    isTTY: boolean;
    columns: number;
    rows: number;
  };
  Object.assign(stdout, { isTTY: true, columns: COLS, rows: ROWS });
  stdout.resume(); // the bytes go nowhere; the screen buffer is what is read
  const typist = startTypist();
  typist.process.stdout!.pipe(stdin, { end: false });
  let waiters: { check: (text: string) => boolean; resolve: (at: number) => void }[] = [];
  let lastScreen = "";
  const tui = await startTui({
    db,
    bus,
    config: benchConfig(modelURL),
    root,
    env: { NO_COLOR: "1", TERM: "xterm-256color" },
    stdin: stdin as unknown as NodeJS.ReadStream,
    stdout: stdout as unknown as NodeJS.WriteStream,
    onFrame: (screenText) => {
      if (waiters.length === 0) return;
      const at = nowMs();
      const text = screenText().join("\n");
      lastScreen = text;
      waiters = waiters.filter((w) => {
        if (!w.check(text)) return true;
        w.resolve(at);
        return false;
      });
    },
  });
  return {
    tui,
    type: (keys) => void stdin.write(keys),
    typeFromOutside: typist.type,
    frame(check, what) {
      return new Promise<number>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `tui bench: no frame with ${what} within ${FRAME_TIMEOUT_MS} ms; the screen:\n${lastScreen}`,
              ),
            ),
          FRAME_TIMEOUT_MS,
        );
        waiters.push({
          check,
          resolve: (at) => {
            clearTimeout(timer);
            resolve(at);
          },
        });
      });
    },
    async close() {
      await tui.close();
      await stopProcess(typist.process);
    },
  };
}

/** A key typist in a process of its own (see Harness.typeFromOutside). */
function startTypist(): {
  process: ChildProcess;
  type(key: string, delayMs: number): Promise<number>;
} {
  const script = `
    process.on("message", ({ key, delayMs }) => setTimeout(() => {
      const at = Number(process.hrtime.bigint()) / 1e6;
      process.stdout.write(key);
      process.send({ at });
    }, delayMs));
    process.on("SIGINT", () => process.exit(0));`;
  const child = spawn(process.execPath, ["-e", script], {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const sent: ((at: number) => void)[] = [];
  child.on("message", (message: { at: number }) => sent.shift()?.(message.at));
  return {
    process: child,
    type: (key, delayMs) =>
      new Promise<number>((resolve) => {
        sent.push(resolve);
        child.send({ key, delayMs });
      }),
  };
}

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
    rows.push(...(await keystrokeLatency(db, bus, fake, url)));
    log("tui: model delta → second process's screen");
    rows.push(...(await deltaLatency(db, bus, fake, url)));
    return rows;
  } finally {
    await fake.close();
    await bus.close();
    await closeDb(db);
  }
}

/** Ctrl+Left / Ctrl+Right between two siblings, one with 10,000 events and one with 10. */
async function openTimes(db: Db, bus: Bus, fake: FakeModel): Promise<BenchRow[]> {
  const root = await createTree(db, { cwd: os.tmpdir() });
  const small = await forkAgent(db, root.id, { name: "small", context: "fresh" });
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

/** A root run by a `warren worker` child process; this process's TUI watches its stream. */
async function deltaLatency(db: Db, bus: Bus, fake: FakeModel, url: string): Promise<BenchRow[]> {
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
    await sendInput(db, root.id, "stream for the bench");
    await done;
    const delays = tokens
      .map((_, i) => (seenAt[i] ?? NaN) - (sentAt[i] ?? NaN))
      .filter((d) => Number.isFinite(d) && d >= 0);
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
    ];
  } finally {
    await h.close();
    await stopProcess(worker.process);
  }
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

async function stopProcess(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  worker.kill("SIGINT");
  const force = setTimeout(() => worker.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(force);
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
