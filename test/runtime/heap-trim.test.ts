// The heap trim of a worker thread: when it collects (a fake heap and collector), and that the
// collector it gets from V8 really collects.
import { getHeapSpaceStatistics } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import {
  compactingCollection,
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

  it("compacts: a heap whose pages a burst left partly empty is given back near its live size", () => {
    const collect = compactingCollection();
    expect(collect).toBeTypeOf("function");
    const old = () => {
      const space = getHeapSpaceStatistics().find((s) => s.space_name === "old_space")!;
      return { committed: space.space_size, used: space.space_used_size };
    };
    const plain = fullCollection()!;
    let burst: object[] | undefined = [];
    for (let i = 0; i < 300_000; i++) burst.push({ n: i, text: `x${i}`, list: [i, i] });
    plain();
    plain(); // all of it in the old generation now
    // One object in seven goes, from every page: each is left about 15% empty.
    const kept = burst.filter((_, i) => i % 7 !== 0);
    burst = undefined;
    plain();
    plain();
    const before = old();
    collect!();
    collect!();
    const after = old();
    expect(kept.length).toBeGreaterThan(0);
    // A plain collection leaves the gap as it is (about 13 MiB here); this one halves it at least.
    expect(after.committed - after.used).toBeLessThan((before.committed - before.used) / 2);
  });
});
