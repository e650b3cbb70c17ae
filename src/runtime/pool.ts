// The worker-thread pool: agent turns never run on the main thread (which draws the TUI). A thread
// that dies after it started is replaced, so its agents are resumed (their leases expire and the
// new thread's scheduler claims them).
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { Config } from "../config/config.js";
import { backoffDelay } from "../db/retry.js";
import { notice, type Warning, type WarningSink } from "../db/warning.js";
import type { WorkerData, WorkerMessage } from "./worker-entry.js";

export interface RuntimeOptions {
  url: string;
  config: Config;
  /** Worker threads (default: config.workerThreads). */
  threads?: number;
  /** Agents run at once by this process (default: config.concurrency). */
  concurrency?: number;
  /** Run only this tree's agents (`warren -p`, the TUI); absent = every tree's (`warren worker`). */
  treeId?: string;
  /**
   * The threads yield the cores to this process's main thread (nice +10 each, on Linux): the TUI
   * sets it so that keys and frames win over agents streaming in the same process.
   */
  yieldToMain?: boolean;
  onWarning?: WarningSink;
}

/** How much lower than the main thread a yielding worker thread runs (nice values, 0 to 19). */
const YIELD_NICENESS = 10;

/**
 * Each thread's young generation is capped at 6 MiB (two 2 MiB semi-spaces and their large
 * objects) instead of V8's 2 × 16 MiB. A burst of turns grows a thread's semi-spaces to their
 * ceiling, and only V8's memory reducer shrinks them, 20–90 s after the thread went quiet: a
 * forced collection (heap-trim.ts) leaves them. Measured with 1,000 agents waiting on two threads
 * (`npm run bench -- --only memory`): 106 KiB of resident memory per agent with the trim alone,
 * 44 KiB with the cap too; fan-in and wake-up no slower (README, memory rows).
 */
const RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 6 };

/** Restarts of dead threads, at most this many a minute (the rest wait); backoff in between. */
const RESTARTS_PER_MINUTE = 5;
const RESTART_BASE_MS = 500;
const RESTART_MAX_MS = 10_000;
/** How long a stopping thread may take to hand its turns back before it is terminated (its
 * leases then simply expire: a database that is away must not hold up a Ctrl+C or SIGTERM). */
const STOP_GRACE_MS = 5_000;

export interface Runtime {
  threads: number;
  /**
   * The person trusted a project's files mid-session: every thread (and any started later) takes
   * `config`'s trust-dependent parts (config/reload.ts) for its next tool call and turn.
   */
  reconfigure(config: Config): void;
  stop(): Promise<void>;
}

/** The compiled worker script; under the test runner (TypeScript sources) the built copy. */
function workerScript(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith(".js")) return path.join(path.dirname(here), "worker-entry.js");
  const root = path.resolve(path.dirname(here), "../..");
  const built = path.join(root, "dist/src/runtime/worker-entry.js");
  if (!existsSync(built)) throw new Error(`worker script ${built} is missing: run npm run build`);
  return built;
}

export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const threads = Math.max(1, options.threads ?? options.config.workerThreads);
  const total = Math.max(1, options.concurrency ?? options.config.concurrency);
  const script = workerScript();
  // Each thread exports on its own and says once when it cannot: the process says it once.
  let telemetryWarned = false;
  const warn = (warning: Warning) => {
    if (warning.kind === "notice" && warning.text.startsWith("telemetry: ")) {
      if (telemetryWarned) return;
      telemetryWarned = true;
    }
    options.onWarning?.(warning);
  };
  const data: WorkerData = {
    url: options.url,
    config: options.config,
    concurrency: Math.max(1, Math.ceil(total / threads)),
    ...(options.treeId ? { treeId: options.treeId } : {}),
    ...(options.yieldToMain ? { niceness: YIELD_NICENESS } : {}),
  };
  // The live thread of each slot (absent while one is being replaced), and whether it is ready.
  const slots: ({ worker: Worker; ready: boolean } | undefined)[] = [];
  const restartTimers = new Set<NodeJS.Timeout>();
  const restartTimes: number[] = [];
  let stopping = false;

  /**
   * Starts slot `index`'s thread; resolves once it is ready. A thread that ends after that (an
   * error nothing caught, a bug) is replaced unless the runtime is stopping.
   */
  function spawn(index: number): Promise<void> {
    const worker = new Worker(script, { workerData: data, resourceLimits: RESOURCE_LIMITS });
    const slot = { worker, ready: false };
    slots[index] = slot;
    let reason: string | undefined;
    return new Promise<void>((resolve, reject) => {
      worker.on("message", (message: WorkerMessage) => {
        if (message.type === "ready") {
          slot.ready = true;
          resolve();
        } else if (message.type === "failed") {
          reject(new Error(message.message));
          void worker.terminate();
        } else if (message.type === "warning") warn(message.warning);
        else if (message.type === "crashed") reason ??= message.message;
      });
      worker.on("error", (err) => {
        reason ??= err.message;
        reject(err);
      });
      worker.once("exit", (code) => {
        if (slots[index] === slot) slots[index] = undefined;
        reject(new Error(`worker thread exited (${code})`));
        if (slot.ready && !stopping) {
          replace(index, `a worker thread stopped on an error: ${reason ?? `exit code ${code}`}`);
        }
      });
    });
  }

  /** Starts another thread in slot `index` after a backoff, at most RESTARTS_PER_MINUTE a minute. */
  function replace(index: number, why: string): void {
    const now = Date.now();
    while (restartTimes.length > 0 && now - restartTimes[0]! > 60_000) restartTimes.shift();
    const delay =
      restartTimes.length >= RESTARTS_PER_MINUTE
        ? restartTimes[0]! + 60_000 - now
        : backoffDelay(restartTimes.length + 1, RESTART_BASE_MS, RESTART_MAX_MS);
    restartTimes.push(now + delay);
    warn(
      notice(`${why}; restarting it${delay >= 2_000 ? ` in ${Math.ceil(delay / 1000)} s` : ""}`),
    );
    const timer = setTimeout(() => {
      restartTimers.delete(timer);
      if (stopping) return;
      spawn(index).catch((err: unknown) => {
        // A replacement that could not start (the database away at that moment): try again.
        if (!stopping) {
          const message = err instanceof Error ? err.message : String(err);
          replace(index, `a worker thread could not start: ${message}`);
        }
      });
    }, delay);
    restartTimers.add(timer);
  }

  /** Asks a thread to hand its turns back and waits for it to end (terminated after a grace). */
  function stopThread(slot: { worker: Worker; ready: boolean }): Promise<void> {
    const { worker } = slot;
    return new Promise<void>((resolve) => {
      if (worker.threadId === -1) return resolve(); // already ended
      const force = setTimeout(() => void worker.terminate(), STOP_GRACE_MS);
      worker.once("exit", () => {
        clearTimeout(force);
        resolve();
      });
      if (!slot.ready) return void worker.terminate(); // still starting: nothing to hand back
      worker.on("message", (m: WorkerMessage) => {
        if (m.type === "stopped") void worker.terminate();
      });
      worker.postMessage({ type: "stop" });
    });
  }

  // The MCP servers' tool lists, fetched in the background: no turn waits for them (mcp/catalog.ts).
  // Loaded only with servers configured: the MCP SDK (ajv, zod) is ~1 MB of modules.
  const servers = options.config.mcpServers;
  const refresh =
    servers && Object.keys(servers).length > 0
      ? (await import("../mcp/refresh.js")).startCatalogRefresh(options.url, servers, warn)
      : undefined;
  try {
    await Promise.all(Array.from({ length: threads }, (_, i) => spawn(i)));
  } catch (err) {
    stopping = true;
    await refresh?.stop();
    await Promise.all(slots.map((slot) => slot?.worker.terminate()));
    throw err;
  }
  return {
    threads,
    reconfigure(config) {
      data.config = config;
      for (const slot of slots) slot?.worker.postMessage({ type: "config", config });
    },
    async stop() {
      stopping = true;
      for (const timer of restartTimers) clearTimeout(timer);
      restartTimers.clear();
      await Promise.all(slots.flatMap((slot) => (slot ? [stopThread(slot)] : [])));
      await refresh?.stop();
    },
  };
}
