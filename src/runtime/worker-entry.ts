// Entry of a worker thread: opens its own services and runs a scheduler until told to stop.
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

async function main(): Promise<void> {
  const { url, config, concurrency, treeId } = workerData as WorkerData;
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
