// A scale-out run of the real binary: `warren worker` processes plus `warren -p` build a scripted
// tree (./tree-script.ts) on one database, optionally with one worker killed by SIGKILL halfway;
// database connections are sampled throughout. Shared by test/scale and bench/scale-out.ts.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { THREAD_POOL_SIZE } from "../../src/runtime/services.js";
import { startFakeModel } from "../support/fake-model.js";
import { warrenEnv, type WarrenRun } from "../support/warren.js";
import { createTreeScript, treeNames, type StageRecord, type TreeShape } from "./tree-script.js";
import { verifyTree, type Verdict } from "./verify-tree.js";

// Connections one process may open (src/runtime/services.ts, src/db/client.ts, src/bus/bus.ts):
// per worker thread a pool of THREAD_POOL_SIZE and one LISTEN connection; on the main thread a
// pool of 4, one LISTEN connection (`-p` waits on its tree) and the migration client at start.
const MAIN_POOL = 4;
const MAIN_EXTRA = 2;

export interface ScaleRunOptions {
  databaseUrl: string;
  shape: TreeShape;
  /** `warren worker` processes started beside `warren -p`. */
  workers: number;
  /** Kill the first worker with SIGKILL once half of the tree's mail exists. */
  killOneWorker?: boolean;
  /** Worker threads per process (default 1). */
  threads?: number;
  leaseSeconds?: number;
  timeoutSeconds?: number;
  /** More environment for every process (e.g. WARREN_POOLER behind a pooler). */
  env?: Record<string, string>;
  /** More keys for every process's config file (e.g. `max_concurrent_requests`). */
  config?: Record<string, unknown>;
  /** Each model reply is held this long first, so that requests overlap at the server. */
  replyDelayMs?: number;
  /** Called every ~50 ms during the run with the probe's connection (what the test watches). */
  watch?: (admin: pg.Client) => Promise<void>;
  log?: (line: string) => void;
}

export interface ScaleRunResult {
  verdict: Verdict;
  run: WarrenRun;
  agents: number;
  wallMs: number;
  modelRequests: number;
  requestsPerSecond: number;
  processes: number;
  maxConnections: number;
  connectionBound: number;
  /** The busiest sample, by application_name. */
  connectionsByApp: Record<string, number>;
  /** Agents whose lease the killed worker held when it died. */
  victims: string[];
  stageLog: StageRecord[];
  /** The most chat requests the fake model had in flight at once. */
  maxInFlight: number;
}

export function connectionBound(processes: number, threads: number): number {
  return processes * (threads * (THREAD_POOL_SIZE + 1) + MAIN_POOL + MAIN_EXTRA);
}

export async function runScaleOut(options: ScaleRunOptions): Promise<ScaleRunResult> {
  const log = options.log ?? (() => {});
  const threads = options.threads ?? 1;
  const names = treeNames(options.shape);
  const script = createTreeScript(options.shape);
  const fake = await startFakeModel();
  const delay = options.replyDelayMs ?? 0;
  fake.script({
    reply: delay > 0 ? (req) => ({ ...script.reply(req), delayMs: delay }) : script.reply,
    times: Infinity,
    label: "tree script",
  });
  const admin = new pg.Client({
    connectionString: options.databaseUrl,
    application_name: "scale-probe",
  });
  admin.on("error", () => {});
  await admin.connect();
  const workers: { child: ChildProcess; done: Promise<WarrenRun> }[] = [];
  const sampler = sampleConnections(admin);
  try {
    const configDir = mkdtempSync(path.join(os.tmpdir(), "warren-scale-"));
    const configFile = path.join(configDir, "config.json");
    writeFileSync(
      configFile,
      JSON.stringify({
        limits: {
          maxChildren: Math.max(16, ...options.shape),
          maxAgentsPerTree: names.length + 10,
        },
        lease_seconds: options.leaseSeconds ?? 3,
        ...options.config,
      }),
    );
    const env = () =>
      warrenEnv({
        databaseUrl: options.databaseUrl,
        modelUrl: fake.baseURL,
        extra: {
          WARREN_CONFIG: configFile,
          WARREN_WORKER_THREADS: String(threads),
          ...options.env,
        },
      });
    for (let i = 0; i < options.workers; i++) {
      const worker = startWarren(["worker"], env());
      workers.push(worker);
      await untilOutput(worker, "worker running", 60_000);
    }
    log(`${options.workers} workers ready; starting warren -p on a ${names.length}-agent tree`);
    const roots = await rootIds(admin);
    const started = Date.now();
    const prompt = startWarren(
      ["-p", "build the tree", "--json", "--timeout", String(options.timeoutSeconds ?? 600)],
      env(),
    );
    const watcher = watchRun(admin, options.watch, prompt.done);
    let victims: string[] = [];
    if (options.killOneWorker && workers[0]) {
      const treeId = await until(() => newRoot(admin, roots), prompt.done);
      const half = Math.floor((names.length - 1) / 2);
      const halfway = async () => ((await mailCount(admin, treeId!)) >= half ? true : undefined);
      const reached = treeId !== undefined && (await until(halfway, prompt.done));
      if (treeId !== undefined && reached) {
        const pid = workers[0].child.pid!;
        process.kill(pid, "SIGKILL");
        await workers[0].done;
        victims = await leasedBy(admin, treeId, pid);
        log(`killed worker ${pid} (SIGKILL) at ${half} mails; it held ${victims.length} agents`);
      }
    }
    const run = await prompt.done;
    await watcher;
    const wallMs = Date.now() - started;
    const treeId = (JSON.parse(run.stdout || "{}") as { tree_id?: string }).tree_id;
    const verdict = treeId
      ? await verifyTree(admin, { treeId, shape: options.shape, stageLog: script.log, victims })
      : {
          problems: [
            `warren -p printed no tree id (exit ${run.code}): ${run.stderr.slice(0, 500)}`,
          ],
          replays: 0,
          retries: 0,
        };
    verdict.problems.push(...script.anomalies.map((a) => `model script: ${a}`));
    if (fake.unmatched.length)
      verdict.problems.push(`${fake.unmatched.length} unmatched model requests`);
    const peak = sampler.peak();
    const processes = options.workers + 1;
    return {
      verdict,
      run,
      agents: names.length,
      wallMs,
      modelRequests: fake.requests.length,
      requestsPerSecond: fake.requests.length / (wallMs / 1000),
      processes,
      maxConnections: peak.total,
      connectionBound: connectionBound(processes, threads),
      connectionsByApp: peak.byApp,
      victims,
      stageLog: script.log,
      maxInFlight: fake.inFlight.max,
    };
  } finally {
    sampler.stop();
    await Promise.all(workers.map((w) => stop(w)));
    await sampler.done;
    await admin.end().catch(() => {});
    await fake.close();
  }
}

/** Calls `watch` every ~50 ms until `done` settles (nothing without a watch). */
async function watchRun(
  admin: pg.Client,
  watch: ScaleRunOptions["watch"],
  done: Promise<unknown>,
): Promise<void> {
  if (!watch) return;
  let finished = false;
  void done.finally(() => (finished = true));
  while (!finished) {
    await watch(admin);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** bin/warren, found upwards from here: this file also runs compiled, from dist/test/scale. */
function binPath(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, "bin", "warren"))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error("bin/warren not found above the scale-out driver");
    dir = up;
  }
  return path.join(dir, "bin", "warren");
}

/** The real binary as a child process, its output collected. */
export function startWarren(
  args: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; done: Promise<WarrenRun> } {
  const child = spawn(process.execPath, [binPath(), ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<WarrenRun>((resolve) => {
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

/** Resolves when the process prints `text`; rejects if it exits first or `ms` pass. */
function untilOutput(
  proc: { child: ChildProcess; done: Promise<WarrenRun> },
  text: string,
  ms: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`no "${text}" within ${ms} ms: ${seen}`)), ms);
    proc.child.stdout!.on("data", (d: Buffer) => {
      seen += d.toString();
      if (seen.includes(text)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void proc.done.then((run) => {
      clearTimeout(timer);
      reject(new Error(`warren worker exited (${run.code}) before "${text}": ${run.stderr}`));
    });
  });
}

/** SIGTERM (a graceful stop), then SIGKILL if it does not leave within 20 s. */
async function stop(proc: { child: ChildProcess; done: Promise<WarrenRun> }): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill("SIGTERM");
  const timer = setTimeout(() => proc.child.kill("SIGKILL"), 20_000);
  await proc.done;
  clearTimeout(timer);
}

/** Polls `probe` every 100 ms until it yields a value; undefined once `end` settles first. */
async function until<T>(
  probe: () => Promise<T | undefined>,
  end: Promise<unknown>,
): Promise<T | undefined> {
  let ended = false;
  void end.then(() => (ended = true));
  while (!ended) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}

async function rootIds(client: pg.Client): Promise<string[]> {
  const rows = await client.query<{ id: string }>("select id from agents where parent_id is null");
  return rows.rows.map((r) => r.id);
}

async function newRoot(client: pg.Client, before: string[]): Promise<string | undefined> {
  const rows = await client.query<{ id: string }>(
    "select id from agents where parent_id is null and not (id = any($1::uuid[])) limit 1",
    [before],
  );
  return rows.rows[0]?.id;
}

async function mailCount(client: pg.Client, treeId: string): Promise<number> {
  const rows = await client.query<{ n: number }>(
    "select count(*)::int as n from mail where tree_id = $1",
    [treeId],
  );
  return rows.rows[0]!.n;
}

async function leasedBy(client: pg.Client, treeId: string, pid: number): Promise<string[]> {
  const rows = await client.query<{ name: string }>(
    "select name from agents where tree_id = $1 and lease_owner like $2",
    [treeId, `${pid}:%`],
  );
  return rows.rows.map((r) => r.name);
}

interface Sampler {
  peak(): { total: number; byApp: Record<string, number> };
  stop(): void;
  done: Promise<void>;
}

/** Counts this database's connections (but the probe's own) every 200 ms, keeping the busiest. */
function sampleConnections(client: pg.Client): Sampler {
  let best = { total: 0, byApp: {} as Record<string, number> };
  let running = true;
  const done = (async () => {
    while (running) {
      const rows = await client
        .query<{ app: string; n: number }>(
          `select coalesce(nullif(application_name, ''), '?') as app, count(*)::int as n
             from pg_stat_activity
            where datname = current_database() and pid <> pg_backend_pid() group by 1`,
        )
        .catch(() => ({ rows: [] }));
      const total = rows.rows.reduce((sum, r) => sum + r.n, 0);
      if (total > best.total)
        best = { total, byApp: Object.fromEntries(rows.rows.map((r) => [r.app, r.n])) };
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return { peak: () => best, stop: () => (running = false), done };
}
