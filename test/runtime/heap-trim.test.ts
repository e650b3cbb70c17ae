// The heap trim of a worker thread: when it collects (a fake heap and collector), and that the
// collector it gets from V8 really collects.
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import {
  fullCollection,
  GROWTH_BYTES,
  QUIET_CHECKS,
  startHeapTrim,
  type HeapTrim,
} from "../../src/runtime/heap-trim.js";

const MiB = 1024 * 1024;

/** A trim over a heap and a thread the test moves by hand; `looks(n)` makes n checks. */
function rig() {
  const state = { quiet: true, committed: 30 * MiB, used: 20 * MiB, collections: 0 };
  const trim: HeapTrim = startHeapTrim({
    isQuiet: () => state.quiet,
    checkMs: 3_600_000, // never by itself: the test looks
    heap: () => ({ committed: state.committed, used: state.used }),
    collect: () => {
      state.collections++;
      state.used = 20 * MiB; // what is live
    },
  });
  const looks = (n: number) => {
    for (let i = 0; i < n; i++) trim.check();
  };
  return { state, trim, looks };
}

describe("heap trim", () => {
  it("collects twice, a quiet while apart, once a quiet thread's heap has grown", () => {
    const { state, trim, looks } = rig();
    looks(QUIET_CHECKS * 3);
    expect(state.collections).toBe(0); // not grown: left to V8
    state.quiet = false;
    state.committed += GROWTH_BYTES + 10 * MiB; // a burst
    state.used += 30 * MiB;
    looks(10);
    expect(state.collections).toBe(0); // busy: never
    state.quiet = true;
    looks(QUIET_CHECKS - 1);
    expect(state.collections).toBe(0);
    looks(1);
    expect(state.collections).toBe(1);
    looks(QUIET_CHECKS);
    expect(state.collections).toBe(2);
    // Pages handed back, or not yet: either way no more trims until the heap grows again.
    looks(QUIET_CHECKS * 5);
    expect(state.collections).toBe(2);
    state.committed += GROWTH_BYTES;
    looks(QUIET_CHECKS * 2);
    expect(state.collections).toBe(4);
    trim.stop();
  });

  it("starts over when a turn works between the two collections", () => {
    const { state, trim, looks } = rig();
    state.committed += GROWTH_BYTES;
    looks(QUIET_CHECKS);
    expect(state.collections).toBe(1);
    state.quiet = false;
    looks(1);
    state.quiet = true;
    looks(QUIET_CHECKS);
    expect(state.collections).toBe(2); // the heap is still grown: a trim from the start
    looks(QUIET_CHECKS);
    expect(state.collections).toBe(3);
    trim.stop();
  });

  it("gets V8's full collection without leaving gc in other contexts", async () => {
    const collect = fullCollection();
    expect(collect).toBeTypeOf("function");
    let target: object | undefined = { big: new Array(1000).fill("x") };
    const ref = new WeakRef(target);
    target = undefined;
    // A WeakRef's target lives until the end of the job that made or read it.
    await new Promise((resolve) => setImmediate(resolve));
    collect!();
    expect(ref.deref()).toBeUndefined();
    if (typeof (globalThis as { gc?: unknown }).gc !== "function") {
      expect(runInNewContext("typeof gc")).toBe("undefined");
    }
  });
});
