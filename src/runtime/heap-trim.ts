// Gives a worker thread's heap back once a burst is over. A burst (many turns starting at once)
// grows the thread's V8 heap with what it promoted, and V8 hands those pages back only when its
// memory reducer notices the thread is idle: measured 20–90 s after 1,000 agents had blocked in
// `wait`, meanwhile about 100 KiB of resident memory per waiting agent (README, memory rows). So
// when all of this thread's turns have been blocked or gone for a few seconds after its heap
// grew, it collects its garbage, twice: V8 hands the pages a collection emptied back to the
// system at the next one.
import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export interface HeapTrimOptions {
  /** Whether no turn of this thread is doing work now (all blocked in `wait`, or none). */
  isQuiet: () => boolean;
  /** How often the thread is looked at (default CHECK_MS; tests call check() themselves). */
  checkMs?: number;
  /** This thread's heap: committed and used bytes (default: V8's statistics). */
  heap?: () => { committed: number; used: number };
  /** A full collection of this thread's heap (default: V8's, see fullCollection; none: no trim). */
  collect?: () => void;
}

export interface HeapTrim {
  /** One look (made every checkMs): collects when it is time, see startHeapTrim. */
  check(): void;
  stop(): void;
}

const CHECK_MS = 1_000;
/** Quiet for this many looks in a row (so 2–3 s), before each collection of a trim. */
export const QUIET_CHECKS = 3;
/**
 * A trim starts when the committed heap has grown this much past what was live (and past what
 * stayed committed) after the last one: a trim costs two full collections (40–80 ms each for
 * 500 waiting agents on a machine loaded 5×), so a thread that only ran a turn or two is left to
 * V8. 16 MiB left most trims of 500 waiting agents a thread undone (their burst grows a heap by
 * 15–20 MiB).
 */
export const GROWTH_BYTES = 8 * 1024 * 1024;

/**
 * Looks at the thread every checkMs. After QUIET_CHECKS quiet looks with a heap grown by
 * GROWTH_BYTES it collects, and after QUIET_CHECKS more quiet looks collects again; a busy look
 * in between starts over.
 */
export function startHeapTrim(options: HeapTrimOptions): HeapTrim {
  const heap = options.heap ?? v8Heap;
  const collect = options.collect ?? fullCollection() ?? (() => {});
  let quietChecks = 0;
  let collected = 0; // collections of the trim under way
  // Pages are handed back a while after a collection: a heap that keeps them is not trimmed
  // again and again, only once it grows past them too.
  let live = heap().used;
  let kept = heap().committed;
  const trim: HeapTrim = {
    check() {
      if (!options.isQuiet()) {
        quietChecks = 0;
        collected = 0;
        return;
      }
      if (++quietChecks < QUIET_CHECKS) return;
      if (collected === 0 && heap().committed < Math.max(live, kept) + GROWTH_BYTES) return;
      quietChecks = 0;
      collect();
      if (++collected < 2) return;
      collected = 0;
      ({ used: live, committed: kept } = heap());
    },
    stop: () => clearInterval(timer),
  };
  const timer = setInterval(() => trim.check(), options.checkMs ?? CHECK_MS);
  timer.unref();
  return trim;
}

function v8Heap(): { committed: number; used: number } {
  const stats = getHeapStatistics();
  return { committed: stats.total_heap_size, used: stats.used_heap_size };
}

/**
 * V8's full collection of the calling thread's heap, if it can be had. Node has no API for it:
 * V8 puts its `gc` function into contexts made while --expose-gc is set, so one is made with the
 * flag on, which is turned off at once (Jest's leak detector does the same). The flag is the
 * process's: another thread turning it off in between is met by trying again. Where the thread
 * has a `gc` already (the process runs with --expose-gc), that one is used and the flag left alone.
 */
export function fullCollection(): (() => void) | undefined {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === "function") return () => void exposed();
  for (let attempt = 0; attempt < 5; attempt++) {
    setFlagsFromString("--expose-gc");
    try {
      const gc: unknown = runInNewContext("typeof gc === 'function' ? gc : undefined");
      if (typeof gc === "function") return () => void gc();
    } finally {
      setFlagsFromString("--no-expose-gc");
    }
  }
  return undefined;
}
