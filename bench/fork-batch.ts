// The forks of one response: 100 fork calls in one warren_fork_batch (as fork-batch.ts gathers
// them, each with its keyed result), beside the same 100 forks made one call each (batches of
// one, as a person's /fork or forkAgent makes them), each round on a fresh tree, alternating so
// load drift hits both. The batch is the one serial step of a fan-in before any child can start.
import { createTree, checkedFork, runForks } from "../src/agents/tree.js";
import { DEFAULT_LIMITS } from "../src/agents/limits.js";
import { closeDb, createDb, type Db } from "../src/db/client.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { median, nowMs } from "./stats.js";

const FORKS = 100;
const ROUNDS = 7;
const LIMITS = { ...DEFAULT_LIMITS, maxChildren: FORKS, maxAgentsPerTree: FORKS + 1 };

export async function forkBatch(context: BenchContext): Promise<BenchRow[]> {
  const { url, signal, log } = context;
  const db = createDb(url, { max: 1, applicationName: "warren-bench-fork-batch" });
  try {
    const batched: number[] = [];
    const single: number[] = [];
    await forkAll(db, true); // warm-up: plans and caches
    await forkAll(db, false);
    for (let r = 0; r < ROUNDS && !signal.aborted; r++) {
      const order = r % 2 === 0 ? [true, false] : [false, true];
      for (const together of order) (together ? batched : single).push(await forkAll(db, together));
      log(
        `fork-batch: round ${r + 1}: ${batched.at(-1)!.toFixed(1)} ms in one batch, ` +
          `${single.at(-1)!.toFixed(1)} ms one by one`,
      );
    }
    return [
      row(
        `fork ${FORKS} children, one response's batch`,
        median(batched),
        "ms",
        `the same ${FORKS} forks one call each`,
        median(single),
      ),
    ];
  } finally {
    await closeDb(db);
  }
}

/** Forks FORKS children of a new root, in one batch or one call each; the milliseconds taken. */
async function forkAll(db: Db, together: boolean): Promise<number> {
  const root = await createTree(db, { name: "forker" });
  const forks = Array.from({ length: FORKS }, (_, i) =>
    checkedFork(
      root.id,
      { name: `child-${i}`, prompt: `Work on part ${i}.`, context: "fresh" },
      { key: `fork:call_${i}`, epoch: 0, toolCallId: `call_${i}` },
    ),
  );
  const started = nowMs();
  if (together) await runForks(db, root.id, {}, LIMITS, forks);
  else for (const fork of forks) await runForks(db, root.id, {}, LIMITS, [fork]);
  return nowMs() - started;
}
