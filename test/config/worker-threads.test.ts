// How many worker threads run agents: WARREN_WORKER_THREADS or the config's `worker_threads`, else
// one on a machine with two cores or fewer and two above (config.ts, defaultWorkerThreads).
import os from "node:os";
import { describe, expect, it } from "vitest";
import { ConfigError, defaultWorkerThreads, loadConfig } from "../../src/config/config.js";

const configOf = (value?: string) =>
  loadConfig({ XDG_CONFIG_HOME: "/nonexistent", WARREN_WORKER_THREADS: value });

describe("worker threads", () => {
  it("leave a core to the main thread and the database on a small machine", () => {
    expect([1, 2, 3, 4, 16].map(defaultWorkerThreads)).toEqual([1, 1, 2, 2, 2]);
    expect(configOf().workerThreads).toBe(defaultWorkerThreads(os.availableParallelism()));
  });

  it("are what the person set, or a one-line error", () => {
    expect(configOf("3").workerThreads).toBe(3);
    expect(() => configOf("two")).toThrow(ConfigError);
    expect(() => configOf("two")).toThrow(/worker_threads/);
  });
});
