// The worker-thread pool: agent turns never run on the main thread (which draws the TUI).
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { Config } from "../config/config.js";
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
  onWarning?: (message: string) => void;
}

/** How much lower than the main thread a yielding worker thread runs (nice values, 0 to 19). */
const YIELD_NICENESS = 10;

export interface Runtime {
  threads: number;
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
  const workers: Worker[] = [];
  const started: Promise<void>[] = [];
  for (let i = 0; i < threads; i++) {
    const data: WorkerData = {
      url: options.url,
      config: options.config,
      concurrency: Math.max(1, Math.ceil(total / threads)),
      ...(options.treeId ? { treeId: options.treeId } : {}),
      ...(options.yieldToMain ? { niceness: YIELD_NICENESS } : {}),
    };
    const worker = new Worker(script, { workerData: data });
    workers.push(worker);
    started.push(
      new Promise<void>((resolve, reject) => {
        let ready = false;
        worker.on("message", (message: WorkerMessage) => {
          if (message.type === "ready") {
            ready = true;
            resolve();
          } else if (message.type === "failed") reject(new Error(message.message));
          else if (message.type === "warning") options.onWarning?.(message.message);
        });
        worker.once("error", reject);
        worker.once("exit", (code) => reject(new Error(`worker thread exited (${code})`)));
        // After it started, a thread that dies (a bug) must not leave its agents still in silence:
        // say so (their leases expire; another thread or process can then resume them).
        worker.once("error", (err) => {
          if (ready) options.onWarning?.(`a worker thread stopped on an error: ${err.message}`);
        });
      }),
    );
  }
  try {
    await Promise.all(started);
  } catch (err) {
    await Promise.all(workers.map((w) => w.terminate()));
    throw err;
  }
  return {
    threads,
    async stop() {
      await Promise.all(
        workers.map(
          (worker) =>
            new Promise<void>((resolve) => {
              const force = setTimeout(() => void worker.terminate(), 10_000);
              worker.once("exit", () => {
                clearTimeout(force);
                resolve();
              });
              worker.on("message", (m: WorkerMessage) => {
                if (m.type === "stopped") void worker.terminate();
              });
              worker.postMessage({ type: "stop" });
            }),
        ),
      );
    },
  };
}
