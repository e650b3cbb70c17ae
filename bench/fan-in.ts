// Fan-in end to end: a root forks 100 children in one response, each mails its result to "parent",
// the root collects them all with one `wait`; the real runtime (worker threads, Postgres) and the
// real openai SDK against a zero-delay fake model. Beside it, the same model requests replayed
// directly with the SDK in the same shape (root, then the children's chains at once, then root):
// the HTTP + SDK floor, so the ratio is what warren's database orchestration adds.
import OpenAI from "openai";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { sql } from "drizzle-orm";
import { createTree } from "../src/agents/tree.js";
import { agentChannel } from "../src/bus/channels.js";
import type { Config } from "../src/config/config.js";
import { closeDb, createDb, type Db } from "../src/db/client.js";
import { wordWarning } from "../src/db/warning.js";
import type { FanInEntry } from "../src/mail/wait.js";
import { startRuntime, type Runtime } from "../src/runtime/pool.js";
import {
  agentNameOf,
  PrefixCache,
  startFakeModel,
  type FakeModel,
  type RecordedRequest,
  type Reply,
} from "../test/support/fake-model.js";
import { startPgProxy, type Traffic } from "../test/support/pg-proxy.js";
import { startOtlpReceiver } from "../test/support/otlp-receiver.js";
import { telemetryOf } from "../src/telemetry/settings.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { benchConfig, countStates, pollUntil } from "./rig.js";
import { collectGarbage, median, nowMs, postgresCpuMs, untilAborted } from "./stats.js";

const CHILDREN = 100;
const WARMUP_ROUNDS = 1;
const ROUNDS = 5;
/**
 * Rounds with OpenTelemetry export on (to a local OTLP receiver), after a warm-up, each paired
 * with one off; the pairs alternate which goes first (off-on, on-off, …) so drift weighs alike.
 */
const OTEL_ROUNDS = 5;
const ROUND_TIMEOUT_MS = 120_000;
const WAIT_TIMEOUT_S = 120;
/** How often the tree is checked for quiet once its root is idle; the wall time is this precise. */
const QUIET_POLL_MS = 5;
const ROOT = "root";
const CHILD_NAMES = Array.from(
  { length: CHILDREN },
  (_, i) => `child-${String(i).padStart(3, "0")}`,
);
const FINAL_ANSWER = `collected ${CHILDREN} results`;
/**
 * The root: forks, wait, answer; every child: one `send {final: true}` (its turn ends there, as
 * the framing tells it). The "two-request" round scripts the children as before issue 42 (send,
 * then an answer only to end the turn): the reference of the requests and input rows.
 */
const EXPECTED_REQUESTS = 3 + CHILDREN;
const TWO_REQUEST_EXPECTED = 3 + 2 * CHILDREN;
let twoRequestChildren = false;

const resultOf = (name: string) => `result of ${name}`;

/** The script, as a function of the request alone, so the SDK replay gets the same answers. */
function scriptedReply(req: RecordedRequest): Reply {
  const name = agentNameOf(req);
  if (name === ROOT) {
    const answered = req.messages.filter((m) => m.role === "assistant").length;
    if (answered === 0) {
      return {
        toolCalls: CHILD_NAMES.map((child) => ({
          name: "fork",
          arguments: { name: child, prompt: `Work on part ${child}.`, context: "fresh" },
        })),
      };
    }
    if (answered === 1) {
      return {
        toolCalls: [
          { name: "wait", arguments: { timeout: WAIT_TIMEOUT_S, from_agents: CHILD_NAMES } },
        ],
      };
    }
    return { text: FINAL_ANSWER };
  }
  if (req.lastMessage?.role === "user") {
    const final = twoRequestChildren ? {} : { final: true };
    return {
      toolCalls: [
        { name: "send", arguments: { to: "parent", message: resultOf(name!), ...final } },
      ],
    };
  }
  return { text: "sent" };
}

export async function fanIn(context: BenchContext): Promise<BenchRow[]> {
  const { url, signal, log } = context;
  const db = createDb(url, { max: 2, applicationName: "warren-bench-fan-in" });
  const warnings: string[] = [];
  let fake: FakeModel | undefined;
  let runtime: Runtime | undefined;
  try {
    fake = await startFakeModel();
    fake.script({ reply: scriptedReply, times: Infinity, label: "fan-in script" });
    // Room for the root and its children; everything else as a user would have it.
    const config = benchConfig(fake.baseURL, {
      maxChildren: CHILDREN,
      maxAgentsPerTree: CHILDREN + 1,
    });
    runtime = await startRuntime({ url, config, onWarning: (w) => warnings.push(wordWarning(w)) });
    const sdk = new OpenAI({
      apiKey: "bench",
      baseURL: fake.baseURL,
      timeout: config.model.timeoutMs,
      maxRetries: config.model.maxRetries,
    });
    log(
      `fan-in: ${runtime.threads} worker threads, concurrency ${config.concurrency}; ` +
        `${WARMUP_ROUNDS} warm-up + ${ROUNDS} rounds`,
    );

    let lastRound: RecordedRequest[] = [];
    const walls: number[] = [];
    const floors: number[] = [];
    const cpu = { warren: zeroCpu(), sdk: zeroCpu() };
    const database = new URL(url).pathname.slice(1);
    for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++) {
      collectGarbage();
      const warrenCpu = startCpu(database);
      const { wallMs, requests } = await fanInRound(db, fake, config, signal);
      lastRound = requests;
      const warrenUsed = warrenCpu();
      collectGarbage();
      const sdkCpu = startCpu(database);
      const floorMs = await untilAborted(replay(sdk, requests, signal), signal);
      const sdkUsed = sdkCpu();
      fake.requests.splice(0);
      if (r < WARMUP_ROUNDS) continue;
      walls.push(wallMs);
      floors.push(floorMs);
      addCpu(cpu.warren, warrenUsed);
      addCpu(cpu.sdk, sdkUsed);
      log(
        `fan-in round ${r - WARMUP_ROUNDS + 1}/${ROUNDS}: ${wallMs.toFixed(0)} ms, ` +
          `SDK floor ${floorMs.toFixed(0)} ms (${requests.length} requests); CPU: ` +
          `${describeCpu(warrenUsed)}, SDK replay ${describeCpu(sdkUsed)}`,
      );
    }
    // The children's model input: measured per child, and against the two-request script.
    const oneRequest = childInput(lastRound);
    twoRequestChildren = true;
    let twoRequest: ReturnType<typeof childInput>;
    try {
      twoRequest = childInput((await fanInRound(db, fake, config, signal)).requests);
    } finally {
      twoRequestChildren = false;
      fake.requests.splice(0);
    }
    const wall = median(walls);
    const floor = median(floors);
    const cpuPerChild = (ms: number) => ms / ROUNDS / CHILDREN;
    await runtime.stop();
    runtime = undefined;
    const exported = await exportOnRounds(url, db, fake, sdk, config, signal, log);
    const traffic = await countedRound(url, db, fake, config, signal, log);
    const perChild = (n: number) => n / CHILDREN;
    const requestsPerChild = EXPECTED_REQUESTS / CHILDREN;
    return [
      row(
        `fan-in ${CHILDREN} children (wall)`,
        wall,
        "ms",
        `same ${EXPECTED_REQUESTS} requests via SDK`,
        floor,
      ),
      row(
        "fan-in model requests per child",
        oneRequest.requests,
        "count",
        "children sending, then answering (before)",
        twoRequest.requests,
      ),
      row(
        "fan-in uncached input tokens per child",
        oneRequest.uncached,
        "tokens",
        "children sending, then answering (before)",
        twoRequest.uncached,
      ),
      row(
        `fan-in orchestration per child`,
        (wall - floor) / CHILDREN,
        "ms",
        "SDK requests per child",
        floor / CHILDREN,
      ),
      row(
        "fan-in orchestration per child, OpenTelemetry export on",
        exported.on.perChildMs,
        "ms",
        "export off, alternate rounds",
        exported.off.perChildMs,
      ),
      row(
        "fan-in CPU per child, OpenTelemetry export on",
        exported.on.cpuPerChildMs,
        "ms",
        "export off, alternate rounds",
        exported.off.cpuPerChildMs,
      ),
      row(
        "fan-in CPU per child, this process (all threads)",
        cpuPerChild(cpu.warren.nodeMs),
        "ms",
        "the SDK replay's, per child",
        cpuPerChild(cpu.sdk.nodeMs),
      ),
      ...(cpu.warren.postgresMs === undefined
        ? []
        : [
            row(
              "fan-in PostgreSQL CPU per child (all its processes)",
              cpuPerChild(cpu.warren.postgresMs),
              "ms",
              "this process's CPU per child",
              cpuPerChild(cpu.warren.nodeMs),
            ),
          ]),
      row(
        "fan-in commits per child (writes)",
        perChild(traffic.commits),
        "count",
        "model requests per child",
        requestsPerChild,
      ),
      row(
        "fan-in durable commits per child (relaxed session)",
        perChild(traffic.durableCommits),
        "count",
        "model requests per child",
        requestsPerChild,
      ),
      row(
        "fan-in statements per child",
        perChild(traffic.statements),
        "count",
        "model requests per child",
        requestsPerChild,
      ),
      row(
        "fan-in round trips per child",
        perChild(traffic.roundTrips),
        "count",
        "model requests per child",
        requestsPerChild,
      ),
    ];
  } finally {
    await runtime?.stop();
    await fake?.close();
    await closeDb(db);
    if (warnings.length > 0) {
      log(
        `fan-in: ${warnings.length} runtime warnings, first: ${warnings.slice(0, 3).join(" | ")}`,
      );
    }
  }
}

/**
 * The same fan-in with telemetry on: every span, metric and log exported over OTLP/HTTP
 * (protobuf, the default) to a local receiver, as a collector on the same host would take them.
 * Export must never slow a turn (batching processors). Rounds with and without it alternate, each
 * on a runtime of its own, so that the machine's drift weighs on both alike; compared are the
 * medians of the orchestration per child (wall less the SDK floor of the same requests) and of
 * this process's CPU per child.
 */
async function exportOnRounds(
  url: string,
  db: Db,
  fake: FakeModel,
  sdk: OpenAI,
  config: Config,
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<Record<"on" | "off", { perChildMs: number; cpuPerChildMs: number }>> {
  const receiver = await startOtlpReceiver();
  const telemetry = telemetryOf({ endpoint: receiver.url }, {});
  const measured = {
    on: { walls: [] as number[], cpus: [] as number[] },
    off: { walls: [] as number[], cpus: [] as number[] },
  };
  try {
    for (let r = 0; r < WARMUP_ROUNDS + OTEL_ROUNDS; r++) {
      for (const mode of r % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const)) {
        const runtime = await startRuntime({
          url,
          config: mode === "on" ? { ...config, telemetry } : config,
          onWarning: () => {},
        });
        try {
          collectGarbage();
          const cpu = process.cpuUsage();
          const { wallMs, requests } = await fanInRound(db, fake, config, signal);
          const used = process.cpuUsage(cpu);
          const floorMs = await untilAborted(replay(sdk, requests, signal), signal);
          fake.requests.splice(0);
          if (r < WARMUP_ROUNDS) continue;
          measured[mode].walls.push((wallMs - floorMs) / CHILDREN);
          measured[mode].cpus.push((used.user + used.system) / 1000 / CHILDREN);
          log(
            `fan-in export ${mode}, round ${r - WARMUP_ROUNDS + 1}/${OTEL_ROUNDS}: ` +
              `${wallMs.toFixed(0)} ms, SDK floor ${floorMs.toFixed(0)} ms, ` +
              `CPU ${((used.user + used.system) / 1000).toFixed(0)} ms`,
          );
        } finally {
          await runtime.stop();
        }
      }
    }
    const figures = (m: { walls: number[]; cpus: number[] }) => ({
      perChildMs: median(m.walls),
      cpuPerChildMs: median(m.cpus),
    });
    return { on: figures(measured.on), off: figures(measured.off) };
  } finally {
    const bytes = receiver.protobuf.reduce((n, b) => n + b.body.length, 0);
    log(`fan-in export: ${receiver.protobuf.length} OTLP requests, ${bytes} bytes received`);
    await receiver.close();
  }
}

/** CPU time spent, in ms: this process's (every thread) and, where /proc tells, PostgreSQL's. */
interface CpuUsed {
  nodeMs: number;
  postgresMs: number | undefined;
}

const zeroCpu = (): CpuUsed => ({ nodeMs: 0, postgresMs: 0 });

/** Starts counting; the returned function gives the CPU used since. */
function startCpu(database: string): () => CpuUsed {
  const node = process.cpuUsage();
  const postgres = postgresCpuMs(database);
  return () => {
    const used = process.cpuUsage(node);
    const postgresNow = postgresCpuMs(database);
    return {
      nodeMs: (used.user + used.system) / 1000,
      postgresMs:
        postgres === undefined || postgresNow === undefined ? undefined : postgresNow - postgres,
    };
  };
}

function addCpu(total: CpuUsed, used: CpuUsed): void {
  total.nodeMs += used.nodeMs;
  total.postgresMs =
    total.postgresMs === undefined || used.postgresMs === undefined
      ? undefined
      : total.postgresMs + used.postgresMs;
}

function describeCpu(used: CpuUsed): string {
  const postgres = used.postgresMs === undefined ? "" : ` + PostgreSQL ${used.postgresMs} ms`;
  return `node ${used.nodeMs.toFixed(0)} ms${postgres}`;
}

/**
 * One more fan-in with the runtime's connections through a counting proxy: the floor the issue
 * asks for, as commits (write transactions), statements and round trips. Not timed: the proxy
 * adds its own hop. The most frequent statements go to the log, per child.
 */
async function countedRound(
  url: string,
  db: Db,
  fake: FakeModel,
  config: Config,
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<Traffic> {
  const target = new URL(url);
  const proxy = await startPgProxy(target.hostname || "127.0.0.1", Number(target.port || 5432));
  const runtime = await startRuntime({ url: proxy.urlFor(url), config, onWarning: () => {} });
  try {
    proxy.resetTraffic();
    await fanInRound(db, fake, config, signal);
    fake.requests.splice(0);
    const traffic = proxy.traffic();
    const top = [...traffic.byStatement]
      .filter(([text]) => !/^(UN)?LISTEN /.test(text))
      .sort((a, b) => b[1] - a[1])
      .slice(0, 24);
    for (const [text, n] of top) {
      log(`fan-in per child ${(n / CHILDREN).toFixed(2)}× ${text.slice(0, 160)}`);
    }
    return traffic;
  } finally {
    await runtime.stop();
    await proxy.close();
  }
}

/** One fan-in: from creating the tree to every agent of it idle again. */
async function fanInRound(
  db: Db,
  fake: FakeModel,
  config: Config,
  signal: AbortSignal,
): Promise<{ wallMs: number; requests: RecordedRequest[] }> {
  fake.requests.splice(0);
  const start = nowMs();
  const root = await createTree(db, {
    prompt: `Fork ${CHILDREN} children and collect their results.`,
    model: config.model.name ?? null,
    cwd: process.cwd(),
    budget: config.rootBudget,
  });
  let states = await countStates(db, root.id);
  // Checked every QUIET_POLL_MS only once the root has gone idle (woken by its channel's NOTIFY
  // of a state change): before that, a check every 5 ms would take CPU from the run it measures.
  const rootEnded = await rootEndWatch(db, root.id);
  const quiet = async () => {
    states = await countStates(db, root.id);
    const total = states.idle + states.running + states.waiting + states.dead;
    if (!rootEnded.idle) rootEnded.idle = (await stateOf(db, root.id)) === "idle";
    return total === CHILDREN + 1 && states.running + states.waiting === 0;
  };
  try {
    await pollUntil(db, quiet, {
      what: "fan-in",
      timeoutMs: ROUND_TIMEOUT_MS,
      intervalMs: QUIET_POLL_MS,
      signal,
      pause: () => rootEnded.pause(),
      describe: async () =>
        `agents by state ${JSON.stringify(states)}, ${fake.requests.length} requests`,
    });
  } finally {
    await rootEnded.close();
  }
  const wallMs = nowMs() - start;
  await verify(db, fake, root.id);
  return { wallMs, requests: [...fake.requests] };
}

/**
 * The children's requests per child, and their input tokens a provider's prefix cache would not
 * serve (the fake's measure: test/support/fake-model.ts PrefixCache), per child, in arrival order.
 */
function childInput(requests: RecordedRequest[]): { requests: number; uncached: number } {
  const cache = new PrefixCache();
  let uncached = 0;
  for (const req of requests) {
    const served = cache.serve(JSON.stringify({ messages: req.messages, tools: req.body.tools }));
    if (agentNameOf(req) === ROOT) continue;
    uncached += served.promptTokens - served.cachedTokens;
  }
  // Requests counted as the issue does: the whole tree's (the root's 3 too), per child.
  return { requests: requests.length / CHILDREN, uncached: uncached / CHILDREN };
}

/** Before the root's turn ends, how long a check waits for its NOTIFY at most. */
const BEFORE_END_POLL_MS = 250;

/**
 * The pause between quiet checks: until the root's channel says its state changed (its turn
 * ended) or BEFORE_END_POLL_MS, then QUIET_POLL_MS once it has. LISTENs on a client of its own.
 */
async function rootEndWatch(db: Db, rootId: string) {
  const client = await db.$client.connect();
  let wake: (() => void) | undefined;
  const onNotification = (message: { payload?: string }) => {
    if (message.payload === "state") wake?.();
  };
  client.on("notification", onNotification);
  await client.query(`LISTEN "${agentChannel(rootId)}"`);
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const watch = {
    /** Set by the caller once a check found the root idle. */
    idle: false,
    pause: () => sleep(watch.idle ? QUIET_POLL_MS : BEFORE_END_POLL_MS),
    async close() {
      client.off("notification", onNotification);
      await client.query("UNLISTEN *").catch(() => undefined);
      client.release();
    },
  };
  return watch;
}

async function stateOf(db: Db, agentId: string): Promise<string | undefined> {
  const rows = await db.execute<{ state: string }>(
    sql`select state from agents where id = ${agentId}`,
  );
  return rows.rows[0]?.state;
}

/** The root's wait received one mail from every child, and it answered: else fail loudly. */
async function verify(db: Db, fake: FakeModel, rootId: string): Promise<void> {
  const problems: string[] = [];
  if (fake.unmatched.length > 0) problems.push(`${fake.unmatched.length} unscripted requests`);
  const expected = twoRequestChildren ? TWO_REQUEST_EXPECTED : EXPECTED_REQUESTS;
  if (fake.requests.length !== expected) {
    problems.push(`${fake.requests.length} model requests, expected ${expected}`);
  }
  const waits = await db.execute<{ content: string }>(sql`
    select content from events
     where agent_id = ${rootId} and kind = 'tool_result' and data->>'name' = 'wait'`);
  const result = waits.rows[0] && (JSON.parse(waits.rows[0].content) as { results?: FanInEntry[] });
  const received = (result?.results ?? []).filter(
    (e) => e.status === "received" && e.message === resultOf(e.name),
  );
  if (waits.rows.length !== 1 || received.length !== CHILDREN) {
    problems.push(
      `the root's wait received ${received.length} of ${CHILDREN} results ` +
        `(${waits.rows.length} wait results: ${waits.rows[0]?.content.slice(0, 300) ?? "none"})`,
    );
  }
  const answer = await db.execute<{ content: string }>(sql`
    select content from events where agent_id = ${rootId} and kind = 'assistant'
     order by id desc limit 1`);
  if (answer.rows[0]?.content !== FINAL_ANSWER) {
    problems.push(`the root's last answer is ${JSON.stringify(answer.rows[0]?.content)}`);
  }
  if (problems.length > 0) throw new Error(`fan-in went wrong:\n  ${problems.join("\n  ")}`);
}

/**
 * The floor: the round's recorded requests sent again with the SDK, streamed to the end, in the
 * fan-in's shape: the root's first request, then its wait request and every child's two
 * requests (one after the other) all at once, then the root's answer.
 */
async function replay(
  sdk: OpenAI,
  requests: RecordedRequest[],
  signal: AbortSignal,
): Promise<number> {
  const chains = new Map<string, RecordedRequest[]>();
  for (const req of requests) {
    const name = agentNameOf(req) ?? "?";
    chains.set(name, [...(chains.get(name) ?? []), req]);
  }
  const root = chains.get(ROOT) ?? [];
  chains.delete(ROOT);
  if (root.length < 2) throw new Error(`fan-in replay: the root made ${root.length} requests`);
  const send = async (chain: RecordedRequest[]) => {
    for (const req of chain) {
      const body = req.body as unknown as ChatCompletionCreateParamsStreaming;
      const stream = await sdk.chat.completions.create(body, { signal });
      for await (const _chunk of stream); // streamed to the end, as the runtime does
    }
  };
  const start = nowMs();
  await send(root.slice(0, 1));
  await Promise.all([send(root.slice(1, -1)), ...[...chains.values()].map(send)]);
  await send(root.slice(-1));
  return nowMs() - start;
}
