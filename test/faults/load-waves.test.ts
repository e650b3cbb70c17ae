// Load waves (SPEC §5, §8): bursts of 150 agents (three 50-agent trees of forks, each parent
// collecting its children with one fan-in wait) arrive at one `warren worker`, with seconds of
// silence between; the worker runs 16 agents at once, fewer than the 24 parents of a wave that
// block in `wait`. Afterwards no row is stuck: every agent idle with no lease, activity or fan-in
// status left, no unconsumed mail, no live stream; every turn, model answer and mail exactly once.
// The protection this leans on: a blocked wait lends its scheduler slot (src/runtime/scheduler.ts)
// — without it the waiting parents take every slot and their children never run.
import { randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { unwatchTree, watchTree } from "../../src/feed/watchers.js";
import { sleep } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import {
  agentNameOf,
  startFakeModel,
  type FakeModel,
  type RecordedRequest,
} from "../support/fake-model.js";
import { startWarren, warrenEnv } from "../support/warren.js";
import { createTreeScript, treeNames, type TreeScript } from "../scale/tree-script.js";
import { verifyTree } from "../scale/verify-tree.js";

const database = useTestDatabase();
const SHAPE = [7, 6]; // 1 + 7 + 42 = 50 agents, 8 of them parents that wait
const TREES_PER_WAVE = 3;
const WAVES = 3;
const SILENCE_MS = 3_000;
const CONCURRENCY = 16;

let fake: FakeModel | undefined;
let worker: ReturnType<typeof startWarren> | undefined;
afterEach(async () => {
  if (worker && worker.child.exitCode === null) worker.child.kill("SIGKILL");
  await fake?.close();
});

/** Each tree runs in its own directory, which every agent's system prompt names. */
function cwdOf(req: RecordedRequest): string {
  return /^Your working directory: (.+)$/m.exec(req.systemPrompt ?? "")?.[1]?.trim() ?? "?";
}

async function until(check: () => Promise<boolean>, what: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
}

describe("load waves", () => {
  it("bursts of 150 agents, then silence, three times: no row stuck, everything once", async () => {
    const { db, url } = database();
    const scripts = new Map<string, TreeScript>();
    const strays: string[] = [];
    fake = await startFakeModel();
    fake.script({
      label: "trees by working directory",
      times: Infinity,
      reply: (req) => {
        const script = scripts.get(cwdOf(req));
        if (script) {
          const reply = script.reply(req);
          // Roots' answers stream slowly enough to be published to their watching feed.
          return agentNameOf(req) === "root" && reply.text ? { ...reply, chunkDelayMs: 20 } : reply;
        }
        strays.push(cwdOf(req));
        return { text: "FAILED: a request from no known tree" };
      },
    });
    const configDir = mkdtempSync(path.join(os.tmpdir(), "warren-waves-"));
    const configFile = path.join(configDir, "config.json");
    writeFileSync(
      configFile,
      JSON.stringify({ limits: { maxChildren: 16, maxAgentsPerTree: 100 }, lease_seconds: 5 }),
    );
    const env = warrenEnv({
      databaseUrl: url,
      modelUrl: fake.baseURL,
      extra: { WARREN_CONFIG: configFile, WARREN_CONCURRENCY: String(CONCURRENCY) },
    });
    worker = startWarren(["worker"], env);

    const trees: { id: string; cwd: string; watcher: string }[] = [];
    const waveMs: number[] = [];
    for (let wave = 0; wave < WAVES; wave++) {
      const started = Date.now();
      const roots = await Promise.all(
        Array.from({ length: TREES_PER_WAVE }, async () => {
          const cwd = mkdtempSync(path.join(os.tmpdir(), "warren-wave-tree-"));
          scripts.set(cwd, createTreeScript(SHAPE));
          const root = await createTree(db, { prompt: "build the tree", cwd });
          // A feed watches each root's stream, as a TUI would: its row must end not live.
          const watcher = randomUUID();
          await watchTree(db, watcher, root.id, [root.id]);
          trees.push({ id: root.id, cwd, watcher });
          return root.id;
        }),
      );
      await until(
        async () => {
          const rows = await db.execute<{ done: number; busy: number }>(sql`
            select count(*) filter (where parent_id is null and state = 'idle')::int as done,
                   count(*) filter (where state in ('running', 'waiting'))::int as busy
              from agents where tree_id = any(${sql.param(roots)}::uuid[])`);
          return rows.rows[0]!.done === roots.length && rows.rows[0]!.busy === 0;
        },
        `wave ${wave + 1} to finish`,
        45_000,
      );
      waveMs.push(Date.now() - started);
      if (wave < WAVES - 1) await sleep(SILENCE_MS); // the silence between bursts
    }
    for (const tree of trees) await unwatchTree(db, tree.watcher);
    worker.child.kill("SIGTERM");
    const stopped = await worker.done;
    process.stderr.write(
      `load waves: ${WAVES} × ${TREES_PER_WAVE * treeNames(SHAPE).length} agents, ` +
        `waves took ${waveMs.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(", ")}; ` +
        `${fake.requests.length} model requests\n`,
    );
    expect(stopped.stderr).not.toMatch(/Failed query|select |insert |update /i);

    // Every tree as scripted: agents, model calls and answers, mail — each exactly once.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (const tree of trees) {
        const verdict = await verifyTree(client, {
          treeId: tree.id,
          shape: SHAPE,
          stageLog: scripts.get(tree.cwd)!.log,
          victims: [],
        });
        expect(verdict.problems, `tree ${tree.id}`).toEqual([]);
        expect(verdict.replays + verdict.retries, `tree ${tree.id}`).toBe(0);
      }
    } finally {
      await client.end();
    }
    expect([...scripts.values()].flatMap((s) => s.anomalies)).toEqual([]);
    expect(strays).toEqual([]);
    expect(fake.unmatched).toEqual([]);
    expect(fake.requests).toHaveLength(WAVES * TREES_PER_WAVE * 115);

    // No row stuck anywhere in the database.
    const stuck = await db.execute<Record<string, number>>(sql`
      select
        (select count(*)::int from agents where state <> 'idle') as not_idle,
        (select count(*)::int from agents
          where lease_owner is not null or lease_expires_at is not null) as leased,
        (select count(*)::int from agents where activity is not null) as with_activity,
        (select count(*)::int from agents where wait_status is not null) as with_wait_status,
        (select count(*)::int from agents where interrupt_requested_at is not null) as interrupted,
        (select count(*)::int from mail where consumed_at is null) as unconsumed_mail,
        (select count(*)::int from agent_streams where live) as live_streams,
        (select count(*)::int from agent_streams) as streams,
        (select count(*)::int from feed_watchers) as watchers`);
    expect(stuck.rows[0]).toEqual({
      not_idle: 0,
      leased: 0,
      with_activity: 0,
      with_wait_status: 0,
      interrupted: 0,
      unconsumed_mail: 0,
      live_streams: 0,
      streams: trees.length, // each root's answer was published, and ended
      watchers: 0,
    });
    const agentsTotal = await db.execute<{ n: number }>(sql`select count(*)::int as n from agents`);
    expect(agentsTotal.rows[0]!.n).toBe(WAVES * TREES_PER_WAVE * treeNames(SHAPE).length);
  }, 120_000); // about 20 s; the waves' own bounds fail first
});
