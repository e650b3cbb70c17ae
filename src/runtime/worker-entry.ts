// Entry of a worker thread: opens its own services and runs a scheduler until told to stop.
// Nothing a database does ends the thread: an error that escapes everything (an 'error' event no
// one heard, a rejected promise no one awaited) is caught here as a last resort.
import { closeMcpConnections } from "../mcp/connections.js";
import { existsSync, readFileSync, unlinkSync } from "node:fs";
import os from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import type { Config } from "../config/config.js";
import { applyTrusted } from "../config/reload.js";
import { isTransient, shownError } from "../db/retry.js";
import { notice, outage, type Warning } from "../db/warning.js";
import { errorMessage } from "../tools/tool.js";
import { startHeapTrim, type HeapTrim } from "./heap-trim.js";
import { startScheduler, type Scheduler } from "./scheduler.js";
import { openServices, type Services } from "./services.js";
import { startTelemetry, type Telemetry } from "../telemetry/sdk.js";
import { agentsByState } from "../agents/by-state.js";

export interface WorkerData {
  url: string;
  config: Config;
  concurrency: number;
  /** Only this tree's agents; absent = every tree's. */
  treeId?: string;
  /** Run this thread this much nicer than it started (see lowerPriority). */
  niceness?: number;
}

export type WorkerMessage =
  | { type: "ready" }
  | { type: "warning"; warning: Warning }
  | { type: "stopped" }
  | { type: "failed"; message: string }
  /** The thread is ending on an error nothing caught (a bug); the pool starts another. */
  | { type: "crashed"; message: string };

// As in cli/main.ts: library deprecation notices are for developers (WARREN_DEBUG=1).
if (process.env.WARREN_DEBUG !== "1") process.noDeprecation = true;

const port = parentPort;
if (!port) throw new Error("worker-entry must run in a worker thread");
const post = (message: WorkerMessage) => port.postMessage(message);

/** How long a crashing thread tries to hand its agents back before it ends anyway. */
const CRASH_STOP_MS = 3_000;

let running:
  { scheduler: Scheduler; services: Services; trim: HeapTrim; telemetry: Telemetry } | undefined;
let crashing = false;

/**
 * The last resort for an error nothing caught. A transient database error (a connection lost
 * where no one listened) is survived: one line, and the retries and polls carry on. Anything else
 * is a bug that may have left this thread's state broken: one line, the agents are handed back
 * (bounded by CRASH_STOP_MS; otherwise their leases expire), and the thread ends so that the pool
 * starts a fresh one.
 */
function onEscaped(err: unknown): void {
  if (isTransient(err)) {
    post({ type: "warning", warning: outage(err) });
    return;
  }
  if (crashing) return;
  crashing = true;
  post({ type: "crashed", message: shownError(err) });
  const current = running;
  running = undefined;
  const handBack = current
    ? current.scheduler.stop().then(() => current.services.close())
    : Promise.resolve();
  const bounded = new Promise((resolve) => setTimeout(resolve, CRASH_STOP_MS).unref());
  void Promise.race([handBack.catch(() => undefined), bounded]).finally(() => process.exit(1));
}
process.on("uncaughtException", onEscaped);
process.on("unhandledRejection", onEscaped);

/**
 * Test-only fault injection (WARREN_TEST_CRASH_FILE): when that file appears, one thread deletes
 * it and throws, from a timer, the error it names: "transient" (a lost connection) or anything
 * else (a bug). Exactly one thread of one process takes each file.
 */
function crashOnTestFile(file: string): void {
  const timer = setInterval(() => {
    if (!existsSync(file)) return;
    let kind: string;
    try {
      kind = readFileSync(file, "utf8").trim();
      unlinkSync(file);
    } catch {
      return; // another thread took it
    }
    if (kind === "transient") {
      throw Object.assign(new Error("read ECONNRESET (test)"), { code: "ECONNRESET" });
    }
    throw new Error("a crash injected by the test");
  }, 100);
  timer.unref();
}

/**
 * On Linux a nice value belongs to a thread, so this lowers only this worker's thread (and what it
 * spawns: tools' child processes inherit it); elsewhere setpriority would move the whole process,
 * main thread included, so it is left alone. Where it is not permitted, the thread runs as it is.
 */
function lowerPriority(niceness: number): void {
  if (process.platform !== "linux") return;
  try {
    os.setPriority(0, Math.min(19, os.getPriority(0) + niceness));
  } catch {
    // Not permitted (a sandbox, a seccomp policy): scheduling priority is a nicety, not a need.
  }
}

async function main(): Promise<void> {
  const { url, config, concurrency, treeId, niceness } = workerData as WorkerData;
  if (niceness) lowerPriority(niceness);
  const warn = (warning: Warning) => post({ type: "warning", warning });
  const services = await openServices(url, config, warn);
  // Before the first turn, so its spans are exported; nothing is loaded when it is off.
  const telemetry = await startTelemetry(config.telemetry, {
    warn: (line) => warn(notice(line)),
    agentsByState: () => agentsByState(services.db, treeId),
  });
  const scheduler = await startScheduler(
    { db: services.db, bus: services.bus, model: services.model, config },
    { concurrency, leaseSeconds: config.leaseSeconds, treeId, onWarning: warn },
  );
  // After a burst, once all of this thread's turns are blocked or gone (heap-trim.ts).
  const trim = startHeapTrim({ isQuiet: () => scheduler.busyCount() === 0 });
  running = { scheduler, services, trim, telemetry };
  port!.on("message", (message: { type: string; config?: Config }) => {
    // `/trust` mid-session: the same object every turn reads, its trusted parts replaced.
    if (message.type === "config" && message.config) applyTrusted(config, message.config);
    if (message.type !== "stop") return;
    void (async () => {
      const current = running;
      running = undefined;
      current?.trim.stop();
      try {
        await current?.scheduler.stop();
        await closeMcpConnections();
        // Bounded (sdk.ts): a collector that does not answer never holds up a stop. Before the
        // database closes: the last collection reads the agents by state (warren.agents).
        await current?.telemetry.shutdown();
        await current?.services.close();
      } catch (err) {
        warn(notice(`stopping a worker thread: ${shownError(err)}`));
      }
      post({ type: "stopped" });
      port!.close();
    })();
  });
  if (process.env.WARREN_TEST_CRASH_FILE) crashOnTestFile(process.env.WARREN_TEST_CRASH_FILE);
  post({ type: "ready" });
}

main().catch((err) => post({ type: "failed", message: errorMessage(err) }));
