// `npm run bench`: runs each benchmark on a scratch database of its own (created, migrated, dropped)
// and prints its figure beside the reference measured in the same run, as a ratio; `--json` saves rows.
import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import { parseArgs } from "node:util";
import pg from "pg";
import { migrate } from "../src/db/migrate.js";
import { maskUrl, resolveDatabaseUrl } from "../src/db/resolve.js";
import { formatGoals, formatTable, writeJson, type Benchmark, type BenchRow } from "./report.js";
import { approvalRoundTrip } from "./approvals.js";
import { bashSandbox } from "./bash-sandbox.js";
import { fanIn } from "./fan-in.js";
import { forkBatch } from "./fork-batch.js";
import { forkPrefix } from "./fork-prefix.js";
import { mcpBench } from "./mcp.js";
import { memory } from "./memory.js";
import { modelCap } from "./model-cap.js";
import { networkGate } from "./network-gate.js";
import { policyParse } from "./policy-parse.js";
import { scaleOut } from "./scale-out.js";
import { startup } from "./startup.js";
import { searchInsert } from "./search-insert.js";
import { throughput } from "./throughput.js";
import { tuiBench } from "./tui.js";
import { tuiScale } from "./tui-scale.js";
import { taskClaimWake } from "./task-claim.js";
import { wakeLatency } from "./wake-latency.js";
import { worktreeFork } from "./worktree-fork.js";
import { checkpointBench } from "./checkpoint.js";

const BENCHMARKS: Record<string, Benchmark> = {
  "wake-latency": wakeLatency,
  throughput,
  "fan-in": fanIn,
  "fork-batch": forkBatch,
  "fork-prefix": forkPrefix,
  memory,
  "scale-out": scaleOut,
  startup,
  tui: tuiBench,
  "tui-scale": tuiScale,
  approvals: approvalRoundTrip,
  "search-insert": searchInsert,
  "policy-parse": policyParse,
  "bash-sandbox": bashSandbox,
  "network-gate": networkGate,
  "task-claim": taskClaimWake,
  "worktree-fork": worktreeFork,
  checkpoint: checkpointBench,
  "model-cap": modelCap,
  mcp: mcpBench,
};

const DEFAULT_TIMEOUT_S = 900;
/** After the overall timeout, how long cleanup may take before the process exits anyway. */
const CLEANUP_GRACE_MS = 30_000;

const USAGE = `usage: npm run bench -- [--only NAME] [--json FILE] [--timeout SECONDS]

Runs warren's benchmarks, each on a scratch database that is dropped afterwards.
  --only NAME        run one benchmark: ${Object.keys(BENCHMARKS).join(", ")}
  --json FILE        also write the rows as JSON
  --timeout SECONDS  stop everything after this long (default ${DEFAULT_TIMEOUT_S})
Database: $BENCH_DATABASE_URL, else $DATABASE_URL, else the embedded PostgreSQL.
`;

const log = (line: string) => void process.stderr.write(`bench: ${line}\n`);

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      json: { type: "string" },
      only: { type: "string" },
      timeout: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const selected = values.only ? [values.only] : Object.keys(BENCHMARKS);
  const unknown = selected.filter((name) => !(name in BENCHMARKS));
  if (unknown.length) {
    process.stderr.write(`bench: unknown benchmark ${unknown.join(", ")}\n${USAGE}`);
    return 2;
  }
  const timeoutS = Number(values.timeout ?? DEFAULT_TIMEOUT_S);
  if (!(timeoutS > 0)) {
    process.stderr.write(`bench: --timeout must be a positive number of seconds\n`);
    return 2;
  }

  const controller = new AbortController();
  // Every concurrent waitForMail listens on this one signal (100 at once in the throughput run).
  setMaxListeners(0, controller.signal);
  const stop = (reason: string) => {
    if (controller.signal.aborted) return;
    log(`${reason}; stopping and cleaning up`);
    controller.abort(new Error(reason));
    setTimeout(() => {
      log("cleanup did not finish in time; exiting");
      process.exit(1);
    }, CLEANUP_GRACE_MS).unref();
  };
  const timer = setTimeout(() => stop(`overall timeout of ${timeoutS} s reached`), timeoutS * 1000);
  const onSignal = () => stop("interrupted");
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  try {
    const baseUrl = await chooseDatabase();
    const rows: BenchRow[] = [];
    // A database per benchmark: a runtime claims every `running` agent it finds, including the
    // ones an earlier benchmark left woken by its mail.
    for (const name of selected) {
      const scratch = await createScratchDatabase(baseUrl);
      log(`running ${name} on scratch database ${scratch.name} on ${maskUrl(baseUrl)}`);
      try {
        await migrate(scratch.url);
        rows.push(
          ...(await BENCHMARKS[name]!({ url: scratch.url, signal: controller.signal, log })),
        );
      } finally {
        await scratch.drop();
      }
    }
    const version = await serverVersion(baseUrl);
    const lines = [
      `warren bench — PostgreSQL ${version}, node ${process.version}`,
      "",
      ...formatTable(rows),
      "",
      ...formatGoals(rows),
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    if (values.json) await writeJson(values.json, rows);
    return 0;
  } catch (error) {
    // The reason was logged when the run was stopped; the stack of whichever await noticed is noise.
    if (controller.signal.aborted) return 1;
    throw error;
  } finally {
    clearTimeout(timer);
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

async function chooseDatabase(): Promise<string> {
  const env = process.env;
  const explicit = env.BENCH_DATABASE_URL || env.DATABASE_URL;
  if (explicit) return explicit;
  log("no BENCH_DATABASE_URL or DATABASE_URL: using the embedded PostgreSQL");
  return resolveDatabaseUrl(env);
}

interface ScratchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

async function createScratchDatabase(baseUrl: string): Promise<ScratchDatabase> {
  const name = `warren_bench_${randomBytes(6).toString("hex")}`;
  await withClient(baseUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  const parsed = new URL(baseUrl);
  parsed.pathname = `/${name}`;
  return {
    name,
    url: parsed.toString(),
    // FORCE: a connection a failed benchmark left open must not keep the database alive.
    async drop() {
      await withClient(baseUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}

async function serverVersion(url: string): Promise<string> {
  const result = await withClient(url, (c) =>
    c.query<{ v: string }>("select current_setting('server_version') as v"),
  );
  return result.rows[0]?.v ?? "?";
}

async function withClient<T>(url: string, action: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: "warren-bench" });
  client.on("error", () => {});
  await client.connect();
  try {
    return await action(client);
  } finally {
    await client.end().catch(() => {});
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
