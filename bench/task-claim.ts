// Task claim wake: how long after a task is added a task_claim blocked on the tree's board returns
// it claimed (the add hands it over in its own statement, board.ts ADD_TASK), beside the raw floor
// (INSERT + NOTIFY on one plain client, woken LISTENer on another), samples interleaved; both
// commit as the runtime does, without waiting for the flush. Five runs of one invocation, each
// printed, and the median of their ratios: issue 30's bar is within 2× the raw round trip.
import { sql } from "drizzle-orm";
import type { AgentRow } from "../src/agents/agents.sql.js";
import { DEFAULT_LIMITS } from "../src/agents/limits.js";
import { getAgent } from "../src/agents/refs.js";
import { createTree, forkAgent } from "../src/agents/tree.js";
import { createBus, type Bus } from "../src/bus/bus.js";
import { closeDb, createDb } from "../src/db/client.js";
import { addTask } from "../src/tasks/board.js";
import type { AgentToolContext } from "../src/tools/agent-context.js";
import { taskClaimTool } from "../src/tools/task-claim.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { median, percentile, nowMs, untilAborted } from "./stats.js";
import { RawNotify } from "./wake-latency.js";

const WARMUP = 50;
const SAMPLES = 300;
const RUNS = 5;

export async function taskClaimWake(context: BenchContext): Promise<BenchRow[]> {
  const { url, signal, log } = context;
  // As the runtime's sessions (runtime/services.ts): commits without waiting for the WAL flush.
  // The raw round trip below commits the same way, so neither side pays a flush the other does not.
  const relaxed = { max: 2, relaxedCommits: true };
  const waiterDb = createDb(url, { ...relaxed, applicationName: "warren-bench-claimer" });
  const senderDb = createDb(url, { ...relaxed, applicationName: "warren-bench-planner" });
  let raw: RawNotify | undefined;
  let bus: Bus | undefined;
  try {
    raw = await RawNotify.open(url, { relaxed: true });
    bus = await createBus(url);
    const root = await createTree(senderDb, { name: "planner" });
    const claimer = await forkAgent(senderDb, root.id, { name: "claimer", context: "fresh" });
    // A task held by the planner keeps the board open: a claim blocks instead of "empty".
    const held = await addTask(senderDb, { treeId: root.id, createdBy: null, title: "held" });
    await senderDb.execute(
      sql`update tasks set state = 'claimed', claimed_by = ${root.id} where id = ${held}`,
    );
    const agent = (await getAgent(waiterDb, claimer.id)) as AgentRow;
    let n = 0;
    const claimOnce = async (): Promise<number> => {
      let blocked!: () => void;
      const parked = new Promise<void>((resolve) => (blocked = resolve));
      const ctx: AgentToolContext = {
        cwd: process.cwd(),
        signal,
        db: waiterDb,
        bus: bus!,
        agent,
        limits: DEFAULT_LIMITS,
        profiles: {},
        fileAccess: "cwd",
        forkCapabilities: () => Promise.reject(new Error("the bench forks nothing")),
        assistantEventId: 0,
        toolCallId: `bench_${++n}`,
        setWaiting: async () => {},
        onBlocked: () => blocked(),
      };
      const claim = taskClaimTool.run({ timeout: 30 }, ctx);
      await untilAborted(parked, signal);
      const start = nowMs();
      await addTask(senderDb, { treeId: root.id, createdBy: null, title: `t${n}` });
      const outcome = await claim;
      const took = nowMs() - start;
      if (!outcome.ok || !(outcome.value as { task_id?: string }).task_id) {
        throw new Error(`task_claim did not claim: ${JSON.stringify(outcome)}`);
      }
      return took;
    };
    log(`task claim wake: ${WARMUP} warm-up, then ${RUNS} runs of ${SAMPLES} samples`);
    for (let i = 0; i < WARMUP; i++) {
      await raw.roundTrip(signal);
      await claimOnce();
    }
    const rows: BenchRow[] = [];
    const ratios: number[] = [];
    for (let run = 1; run <= RUNS; run++) {
      const rawMs: number[] = [];
      const claimMs: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        rawMs.push(await raw.roundTrip(signal));
        claimMs.push(await claimOnce());
      }
      ratios.push(percentile(claimMs, 50) / percentile(rawMs, 50));
      rows.push(
        row(
          `task_claim wake after task_add, p50, run ${run} of ${RUNS}`,
          percentile(claimMs, 50),
          "ms",
          "raw NOTIFY round trip p50",
          percentile(rawMs, 50),
        ),
      );
    }
    rows.push(row("task_claim wake ÷ raw, median of 5 runs", median(ratios), "× raw", "goal", 2));
    return rows;
  } finally {
    await raw?.close();
    await bus?.close();
    await closeDb(waiterDb);
    await closeDb(senderDb);
  }
}
