// Model cap: what `max_concurrent_requests` adds to one model request (a slot free, the usual
// case), beside the same requests without a cap and a raw `select 1` round trip on the same pool,
// samples interleaved. The model answers at once (in process), so the difference is the cap's.
// Issue 30's bar: at most one database round trip per model request; the statements the request
// waits for are counted too (the release is sent after the answer, not waited for).
import os from "node:os";
import { sql } from "drizzle-orm";
import { createTree } from "../src/agents/tree.js";
import { createBus, type Bus } from "../src/bus/bus.js";
import { loadConfig } from "../src/config/config.js";
import { closeDb, createDb } from "../src/db/client.js";
import type { Model, ModelRequest } from "../src/llm/model.js";
import { claimNext } from "../src/runtime/leases.js";
import { withModelCap } from "../src/runtime/model-cap.js";
import type { TurnDeps } from "../src/runtime/run-deps.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { nowMs, percentile } from "./stats.js";

const WARMUP = 50;
const SAMPLES = 1_000;
const BASE_URL = "http://bench-model.invalid/v1";

const instant: Model = {
  complete: () =>
    Promise.resolve({
      text: "ok",
      toolCalls: [],
      usage: { inputTokens: 1, outputTokens: 1 },
      finishReason: "stop",
    }),
};

export async function modelCap(context: BenchContext): Promise<BenchRow[]> {
  const { url, signal, log } = context;
  // As a worker thread's pool (services.ts): relaxed commits.
  const db = createDb(url, { max: 4, applicationName: "warren-bench-cap", relaxedCommits: true });
  let bus: Bus | undefined;
  try {
    bus = await createBus(url);
    const root = await createTree(db, { name: "capped" });
    await db.execute(sql`update agents set state = 'running' where id = ${root.id}`);
    const claimed = await claimNext(db, "bench-owner", 600, root.tree_id);
    const config = loadConfig({ HOME: os.tmpdir(), WARREN_MODEL: "m", OPENAI_BASE_URL: BASE_URL });
    const base: TurnDeps = {
      db,
      bus,
      model: instant,
      config,
      fence: { owner: "bench-owner", epoch: claimed!.lease_epoch },
    };
    const plain = withModelCap(base, root.id);
    const capped = withModelCap(
      {
        ...base,
        config: { ...config, model: { ...config.model, maxConcurrent: { [BASE_URL]: 4 } } },
      },
      root.id,
    );
    if (plain !== instant || capped === instant) throw new Error("the cap was not applied as set");
    // Statements sent on the pool during a request, and of those the ones it waited for (settled
    // before it returned): the release is sent as the request ends, and not waited for.
    let sent = 0;
    let pending = new Set<Promise<unknown>>();
    const pool = db.$client as unknown as { query: (...args: unknown[]) => unknown };
    const query = pool.query.bind(pool);
    pool.query = (...args) => {
      sent++;
      const result = query(...args);
      if (result instanceof Promise) {
        const tracked = result.finally(() => pending.delete(tracked));
        pending.add(tracked);
        tracked.catch(() => {});
      }
      return result;
    };
    const request = (): ModelRequest => ({ model: "m", messages: [], tools: [], signal });
    const time = async (model: Model) => {
      const start = nowMs();
      await model.complete(request());
      return nowMs() - start;
    };
    const rawMs: number[] = [];
    const plainMs: number[] = [];
    const cappedMs: number[] = [];
    let awaited = 0;
    let total = 0;
    log(`model cap: ${WARMUP} warm-up + ${SAMPLES} samples`);
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      if (signal.aborted) throw signal.reason;
      const start = nowMs();
      await db.$client.query("select 1");
      const r = nowMs() - start;
      const p = await time(plain);
      const before = sent;
      pending = new Set();
      const c = await time(capped);
      const during = sent - before;
      const waitedFor = during - pending.size;
      // The turn records the answer next (a round trip the release overlaps): one here too.
      await db.$client.query("select 1");
      if (i >= WARMUP) {
        rawMs.push(r);
        plainMs.push(p);
        cappedMs.push(c);
        awaited += waitedFor;
        total += during;
      }
    }
    const added = percentile(cappedMs, 50) - percentile(plainMs, 50);
    return [
      row(
        "model request p50 added by the cap (slot free)",
        added,
        "ms",
        "raw select 1 round trip p50",
        percentile(rawMs, 50),
      ),
      row(
        "capped model request p50 (instant model)",
        percentile(cappedMs, 50),
        "ms",
        "uncapped, same requests p50",
        percentile(plainMs, 50),
      ),
      row(
        "statements a capped request waits for",
        awaited / SAMPLES,
        "per request",
        "goal: at most one round trip",
        1,
      ),
      row(
        "statements a capped request sends (release included)",
        total / SAMPLES,
        "per request",
        "one acquire + one release",
        2,
      ),
    ];
  } finally {
    await bus?.close();
    await closeDb(db);
  }
}
