// Small measuring helpers shared by the benchmarks: a monotonic clock, percentiles, bounded waits.
import { readdirSync, readFileSync } from "node:fs";

/** Milliseconds from a monotonic clock, with sub-millisecond resolution. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** The p-th percentile (0–100) by nearest rank; the samples need not be sorted. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new Error("percentile of no samples");
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** The middle sample (the lower of the two for an even count); the samples need not be sorted. */
export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

export function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error("benchmark aborted");
}

/** Rejects when `signal` aborts, so an await that should never hang cannot outlive the run. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** Collects the garbage between phases when node runs with --expose-gc, so no phase pays for another. */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Runs `task(i)` for i in [0, count) with at most `limit` running at once. */
export async function forEachLimited(
  count: number,
  limit: number,
  task: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, lane));
}

/** Linux's USER_HZ: /proc reports CPU time in hundredths of a second. */
export const TICK_MS = 10;

/** A process's or thread's CPU time from its /proc stat file (user + system), or undefined off Linux. */
export function procStatCpuMs(statPath: string): number | undefined {
  try {
    const stat = readFileSync(statPath, "utf8");
    // After the command name: state, ppid, … utime (14th field) and stime (15th), in ticks.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return undefined;
  }
}

/** A backend's title: "postgres: [cluster: ]user database host(port) state". */
const BACKEND_TITLE = /^postgres: (?:\S+: )?\S+ (\S+) (?:\[local\]|\S+\(\d+\))/;

/**
 * The CPU time of the PostgreSQL backends on this machine connected to `database` (their command
 * line names it), or undefined where /proc cannot tell (not Linux, a remote server). A backend that
 * exits in between takes its time with it: measure across connections that stay open.
 */
export function postgresCpuMs(database: string): number | undefined {
  let total = 0;
  let seen = false;
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let command: string;
    try {
      command = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      continue; // gone since the listing
    }
    if (BACKEND_TITLE.exec(command)?.[1] !== database) continue;
    const ms = procStatCpuMs(`/proc/${pid}/stat`);
    if (ms === undefined) continue;
    total += ms;
    seen = true;
  }
  return seen ? total : undefined;
}
