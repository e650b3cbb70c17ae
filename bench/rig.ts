// What the end-to-end benchmarks share: a Config aimed at a fake model, and reading agent states.
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { loadConfig, type Config } from "../src/config/config.js";
import type { Db } from "../src/db/client.js";
import type { Limits } from "../src/agents/limits.js";
import { abortError } from "./stats.js";

/**
 * The runtime's Config from an environment of our own (never the developer's config file),
 * pointed at `modelURL`, with `limits` overriding the defaults.
 */
export function benchConfig(modelURL: string, limits: Partial<Limits> = {}): Config {
  const config = loadConfig({
    WARREN_CONFIG: path.join(os.tmpdir(), "warren-bench-no-config.json"),
    WARREN_MODEL: "fake-model",
    OPENAI_BASE_URL: modelURL,
    OPENAI_API_KEY: "bench",
  });
  return { ...config, limits: { ...config.limits, ...limits } };
}

export type StateCounts = Record<"idle" | "running" | "waiting" | "dead", number>;

/** How many agents are in each state, over the whole database or one tree. */
export async function countStates(db: Db, treeId?: string): Promise<StateCounts> {
  const rows = await db.execute<{ state: keyof StateCounts; n: number }>(sql`
    select state, count(*)::int as n from agents
     where ${treeId ?? null}::uuid is null or tree_id = ${treeId ?? null}::uuid
     group by state`);
  const counts: StateCounts = { idle: 0, running: 0, waiting: 0, dead: 0 };
  for (const r of rows.rows) counts[r.state] = r.n;
  return counts;
}

/** The `error` events agents recorded (model or internal errors, exhausted budgets), newest first. */
export async function agentErrors(db: Db, limit = 5): Promise<string[]> {
  const rows = await db.execute<{ name: string; content: string }>(sql`
    select a.name, e.content from events e join agents a on a.id = e.agent_id
     where e.kind = 'error' order by e.id desc limit ${limit}`);
  return rows.rows.map((r) => `${r.name}: ${r.content}`);
}

/**
 * Polls `check` every `intervalMs` until it returns true; throws `describe()`'s account on the
 * deadline, at once when the check finds agent errors, and when `signal` aborts.
 */
export async function pollUntil(
  db: Db,
  check: () => Promise<boolean>,
  options: {
    what: string;
    timeoutMs: number;
    intervalMs: number;
    signal: AbortSignal;
    describe: () => Promise<string>;
    /** Waits between checks instead of `intervalMs` (e.g. until a NOTIFY, or less often). */
    pause?: () => Promise<void>;
  },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let nextErrorCheck = Date.now() + 1000;
  while (!(await check())) {
    if (options.signal.aborted) throw abortError(options.signal);
    const late = Date.now() >= deadline;
    // Errors are looked for about once a second, so a tight poll stays one query per round.
    let errors: string[] = [];
    if (late || Date.now() >= nextErrorCheck) {
      errors = await agentErrors(db);
      nextErrorCheck = Date.now() + 1000;
    }
    if (errors.length > 0 || late) {
      const why =
        errors.length > 0 ? "agents recorded errors" : `not within ${options.timeoutMs} ms`;
      throw new Error(
        `${options.what}: ${why}; ${await options.describe()}` +
          (errors.length ? `\n  ${errors.join("\n  ")}` : ""),
      );
    }
    await (options.pause?.() ?? new Promise((resolve) => setTimeout(resolve, options.intervalMs)));
  }
}
