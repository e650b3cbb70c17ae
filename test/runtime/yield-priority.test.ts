// Under the TUI the worker threads yield the cores to the main thread (it draws and takes keys): on
// Linux each worker thread runs at nice +10 while the main thread keeps its priority; a runtime
// without yieldToMain (`warren worker`, `-p`) leaves every thread as it was. Read from /proc.
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { startRuntime } from "../../src/runtime/pool.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();
const THREADS = 2;

/** The nice value of every thread of this process, by thread id. */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      // Fields after the command name "(…)": state is the 3rd field of stat, nice the 19th.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      nices.set(Number(tid), Number(fields[16]));
    } catch {
      // The thread ended while being read.
    }
  }
  return nices;
}

async function nicesWhileRunning(yieldToMain: boolean): Promise<Map<number, number>> {
  const config = loadConfig({
    HOME: "/nonexistent",
    WARREN_MODEL: "fake",
    OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    OPENAI_API_KEY: "test",
  });
  const runtime = await startRuntime({
    url: database().url,
    config,
    threads: THREADS,
    yieldToMain,
  });
  try {
    return threadNices();
  } finally {
    await runtime.stop();
  }
}

const base = os.getPriority(0);
// Where threads already run at the weakest priority there is nothing to lower.
const linux = process.platform === "linux" && base < 19;

describe("worker threads yielding to the main thread", () => {
  it.skipIf(!linux)(
    "run at nice +10 under the TUI; the main thread keeps its priority",
    async () => {
      const nices = await nicesWhileRunning(true);
      expect(nices.get(process.pid)).toBe(base);
      const lowered = [...nices.values()].filter((n) => n === Math.min(19, base + 10));
      expect(lowered).toHaveLength(THREADS);
      expect([...nices.values()].filter((n) => n !== base)).toHaveLength(THREADS);
    },
  );

  it.skipIf(!linux)("keep their priority in a runtime that does not yield", async () => {
    const nices = await nicesWhileRunning(false);
    expect(nices.size).toBeGreaterThan(THREADS);
    expect([...nices.values()].every((n) => n === base)).toBe(true);
  });
});
