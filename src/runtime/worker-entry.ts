// Entry of a worker thread: opens its own services and runs a scheduler until told to stop.
import os from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import type { Config } from "../config/config.js";
import { errorMessage } from "../tools/tool.js";
import { startScheduler } from "./scheduler.js";
import { openServices } from "./services.js";

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
  | { type: "warning"; message: string }
  | { type: "stopped" }
  | { type: "failed"; message: string };

// As in cli/main.ts: library deprecation notices are for developers (WARREN_DEBUG=1).
if (process.env.WARREN_DEBUG !== "1") process.noDeprecation = true;

const port = parentPort;
if (!port) throw new Error("worker-entry must run in a worker thread");
const post = (message: WorkerMessage) => port.postMessage(message);

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
  const warn = (message: string) => post({ type: "warning", message });
  const services = await openServices(url, config, warn);
  const scheduler = await startScheduler(
    { db: services.db, bus: services.bus, model: services.model, config },
    { concurrency, leaseSeconds: config.leaseSeconds, treeId, onWarning: warn },
  );
  port!.on("message", (message: { type: string }) => {
    if (message.type !== "stop") return;
    void (async () => {
      await scheduler.stop();
      await services.close();
      post({ type: "stopped" });
      port!.close();
    })();
  });
  post({ type: "ready" });
}

main().catch((err) => post({ type: "failed", message: errorMessage(err) }));
