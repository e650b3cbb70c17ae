// `npm run soak` (not in CI; issue 7 §9): 100 agents mail tokens to each other for N minutes
// through `warren worker` processes and the fake model. Every 30 s it samples RSS, database
// connections and send→wake latency; at the end it checks that nothing was lost or doubled
// (each token's hops 0..n exist once, all consumed) and that memory and connections stayed flat.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { createTree, forkAgent } from "../src/agents/tree.js";
import { DEFAULT_LIMITS } from "../src/agents/limits.js";
import { closeDb, createDb } from "../src/db/client.js";
import { migrate } from "../src/db/migrate.js";
import { maskUrl, resolveDatabaseUrl } from "../src/db/resolve.js";
import { sendMail } from "../src/mail/send.js";
import { startFakeModel, type RecordedRequest, type Reply } from "../test/support/fake-model.js";
import { warrenEnv } from "../test/support/warren.js";
import { startWarren } from "../test/scale/scale-run.js";
import { checkSoak, type Sample } from "./soak-check.js";

const USAGE = `usage: npm run soak -- [--minutes N] [--agents N] [--tokens N] [--think-ms N]
                        [--workers N] [--sample-seconds N]

Agents mail tokens to random other agents (each hop: a model call that sends, one that ends
the turn) for --minutes (default 10) on a scratch database (dropped afterwards), then drains
and checks: nothing lost or doubled, RSS and connections flat (last third vs first third).
Database: $SOAK_DATABASE_URL, else $DATABASE_URL, else the embedded PostgreSQL.
`;

const log = (line: string) => void process.stderr.write(`soak: ${line}\n`);
const TOKEN = /token (\d+) hop (\d+)/g;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      minutes: { type: "string", default: "10" },
      agents: { type: "string", default: "100" },
      tokens: { type: "string", default: "20" },
      "think-ms": { type: "string", default: "200" },
      workers: { type: "string", default: "2" },
      "sample-seconds": { type: "string", default: "30" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const num = (name: keyof typeof values) => {
    const n = Number(values[name]);
    if (!(n > 0)) throw new Error(`--${name} must be a positive number`);
    return n;
  };
  const minutes = num("minutes");
  const agentCount = Math.round(num("agents"));
  const tokens = Math.round(num("tokens"));
  const thinkMs = num("think-ms");
  const workerCount = Math.round(num("workers"));
  const sampleMs = num("sample-seconds") * 1000;

  const baseUrl =
    process.env.SOAK_DATABASE_URL ||
    process.env.DATABASE_URL ||
    (await resolveDatabaseUrl(process.env));
  const scratch = `warren_soak_${randomBytes(6).toString("hex")}`;
  await adminQuery(baseUrl, `CREATE DATABASE "${scratch}"`);
  const url = withDatabase(baseUrl, scratch);
  log(`scratch database ${scratch} on ${maskUrl(baseUrl)}`);
  const fake = await startFakeModel();
  const db = createDb(url, { max: 2, applicationName: "soak-driver" });
  const probe = new pg.Client({ connectionString: url, application_name: "soak-probe" });
  probe.on("error", () => {});
  const workers: ReturnType<typeof startWarren>[] = [];
  try {
    await migrate(url);
    await probe.connect();
    let soaking = true;
    fake.script({
      reply: (req) => reply(req, agentCount, thinkMs, () => soaking),
      times: Infinity,
    });

    // The agents: a root and children ten to a parent, all idle until mail wakes them.
    const limits = { ...DEFAULT_LIMITS, maxAgentsPerTree: agentCount + 10 };
    const root = await createTree(db, { name: "s0", model: "fake-model" });
    const ids = [root.id];
    for (let i = 1; i < agentCount; i++) {
      const parent = ids[Math.floor((i - 1) / 10)]!;
      ids.push((await forkAgent(db, parent, { name: `s${i}`, context: "fresh" }, limits)).id);
    }
    const configFile = path.join(
      mkdtempSync(path.join(os.tmpdir(), "warren-soak-")),
      "config.json",
    );
    const huge = 1_000_000_000;
    writeFileSync(
      configFile,
      JSON.stringify({ budget: { turns: huge, tool_calls: huge, tokens: huge } }),
    );
    for (let i = 0; i < workerCount; i++) {
      const env = warrenEnv({
        databaseUrl: url,
        modelUrl: fake.baseURL,
        extra: { WARREN_CONFIG: configFile },
      });
      workers.push(startWarren(["worker"], env));
    }
    for (let t = 0; t < tokens; t++) {
      const to = ids[Math.floor(Math.random() * ids.length)]!;
      await sendMail(db, { treeId: root.id, fromId: null, toId: to, body: `token ${t} hop 0` });
    }
    log(
      `${agentCount} agents, ${tokens} tokens, ${workerCount} workers, ${minutes} min; sampling every ${sampleMs / 1000} s`,
    );
    process.stdout.write(`${formatHeader()}\n`);

    const samples: Sample[] = [];
    const started = Date.now();
    let windowStart = await dbNow(probe);
    while (Date.now() - started < minutes * 60_000) {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(sampleMs, minutes * 60_000 - (Date.now() - started))),
      );
      for (const w of workers) {
        if (w.child.exitCode !== null) {
          const { stderr } = await w.done;
          throw new Error(`a worker exited (${w.child.exitCode}): ${stderr.trim()}`);
        }
      }
      const windowEnd = await dbNow(probe);
      const sample = await takeSample(
        probe,
        workers.map((w) => w.child.pid!),
        windowStart,
        windowEnd,
      );
      sample.seconds = (Date.now() - started) / 1000;
      samples.push(sample);
      windowStart = windowEnd;
      // The fake model records every request; a soak needs none of them kept.
      fake.requests.splice(0);
      process.stdout.write(`${formatSample(sample)}\n`);
    }

    soaking = false;
    log("soak over: letting every token finish its last hop");
    const drained = await drain(probe, 120_000);
    const verdict = await checkSoak(probe, { tokens, samples, drained });
    for (const line of verdict.lines) process.stdout.write(`${line}\n`);
    return verdict.ok ? 0 : 1;
  } finally {
    for (const w of workers) w.child.kill("SIGTERM");
    await Promise.all(workers.map((w) => w.done));
    await probe.end().catch(() => {});
    await closeDb(db);
    await fake.close();
    await adminQuery(baseUrl, `DROP DATABASE IF EXISTS "${scratch}" WITH (FORCE)`).catch(() => {});
  }
}

/** Forwards every token that arrived since the agent's last answer to a random other agent. */
function reply(
  req: RecordedRequest,
  agents: number,
  thinkMs: number,
  soaking: () => boolean,
): Reply {
  // A compaction (the conversation outgrew the window): a summary, no tools.
  if (/^You summarise the conversation/.test(req.systemPrompt ?? "")) {
    return { text: "You forward every token you receive to a random other agent." };
  }
  const last = req.lastMessage;
  if (last?.role !== "user") return { text: "ok" }; // after its sends: end the turn
  const at = req.messages.findLastIndex((m) => m.role === "assistant");
  const arrived = req.messages.slice(at + 1).filter((m) => m.role === "user");
  const hops = arrived.flatMap((m) => [...(m.content ?? "").matchAll(TOKEN)]);
  if (!soaking() || hops.length === 0) return { text: "done" };
  const self = /^Your name: s(\d+)$/m.exec(req.systemPrompt ?? "")?.[1];
  return {
    delayMs: thinkMs,
    toolCalls: hops.map((hop) => {
      let to = Math.floor(Math.random() * agents);
      if (String(to) === self) to = (to + 1) % agents;
      return {
        name: "send",
        arguments: { to: `s${to}`, message: `token ${hop[1]} hop ${Number(hop[2]) + 1}` },
      };
    }),
  };
}

async function takeSample(
  probe: pg.Client,
  pids: number[],
  from: string,
  to: string,
): Promise<Sample> {
  const latency = await probe.query<{
    n: number;
    p50: number | null;
    p95: number | null;
    max: number | null;
  }>(
    `select count(*)::int as n,
            percentile_cont(0.5) within group (order by ms) as p50,
            percentile_cont(0.95) within group (order by ms) as p95, max(ms)::float8 as max
       from (select extract(epoch from consumed_at - created_at) * 1000 as ms from mail
              where consumed_at > $1 and consumed_at <= $2) w`,
    [from, to],
  );
  const conns = await probe.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and application_name like 'warren%'`,
  );
  const l = latency.rows[0]!;
  const seconds = (Date.parse(to) - Date.parse(from)) / 1000;
  return {
    seconds: 0,
    mails: l.n,
    mailsPerSecond: l.n / seconds,
    p50: l.p50 ?? NaN,
    p95: l.p95 ?? NaN,
    max: l.max ?? NaN,
    rssMb: pids.reduce((sum, pid) => sum + rssMb(pid), 0),
    connections: conns.rows[0]!.n,
  };
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

/** Waits until no mail is unconsumed and no agent runs; false when `ms` pass first. */
async function drain(probe: pg.Client, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const rows = await probe.query<{ pending: number; busy: number }>(
      `select (select count(*)::int from mail where consumed_at is null) as pending,
              (select count(*)::int from agents where state in ('running', 'waiting')) as busy`,
    );
    if (rows.rows[0]!.pending === 0 && rows.rows[0]!.busy === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return false;
}

function formatHeader(): string {
  return ["   t s", " mails", "mail/s", "p50 ms", "p95 ms", "max ms", "RSS MB", "conns"].join(
    " | ",
  );
}

function formatSample(s: Sample): string {
  const f = (n: number, w: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : "-").padStart(w);
  return [
    f(s.seconds, 6),
    f(s.mails, 6),
    f(s.mailsPerSecond, 6, 1),
    f(s.p50, 6, 1),
    f(s.p95, 6, 1),
    f(s.max, 6),
    f(s.rssMb, 6, 1),
    f(s.connections, 5),
  ].join(" | ");
}

async function dbNow(probe: pg.Client): Promise<string> {
  const rows = await probe.query<{ now: Date }>("select clock_timestamp() as now");
  return rows.rows[0]!.now.toISOString();
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, application_name: "soak-admin" });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(error instanceof Error ? error.message : String(error));
    process.exit(1);
  },
);
