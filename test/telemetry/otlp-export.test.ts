// OpenTelemetry export end to end (issue 42 §3): `warren -p` and two `warren worker` processes run
// a fan-in against the fake model, exporting OTLP/HTTP to a local receiver. One trace holds the
// whole tree: every child's run descends from its parent's `fork` span, whichever process ran it.
// Prompt text is not exported without log_content; an unreachable collector costs one line.
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel, type RecordedRequest } from "../support/fake-model.js";
import {
  attributesOf,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from "../support/otlp-receiver.js";
import { runWarren, startWarren, warrenEnv } from "../support/warren.js";
import { until } from "../support/until.js";
import { answerApproval, listPending } from "../../src/approvals/approvals.js";

const database = useTestDatabase();
const CHILDREN = ["c1", "c2", "c3", "c4"];
const SECRET = "the-secret-prompt-text-7781";

let cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  cleanups = [];
});

const lastRole = (req: RecordedRequest) => req.lastMessage?.role;

/** A fake model and a local OTLP receiver, both closed after the test. */
async function rig(): Promise<{ fake: FakeModel; receiver: OtlpReceiver }> {
  const fake = await startFakeModel();
  cleanups.push(() => fake.close());
  const receiver = await startOtlpReceiver();
  cleanups.push(() => receiver.close());
  return { fake, receiver };
}

/** warren's environment exporting http/json to the receiver, with a config file of its own. */
function exportingEnv(fake: FakeModel, receiver: OtlpReceiver): NodeJS.ProcessEnv {
  return warrenEnv({
    databaseUrl: database().url,
    modelUrl: fake.baseURL,
    extra: {
      WARREN_CONFIG: configFile({}),
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    },
  });
}

/** Root forks every child (fresh), waits for all, answers; each child sends its result home. */
function scriptFanIn(fake: FakeModel, childDelayMs: number, rootHoldMs = 0): void {
  fake.script([
    {
      agent: "root",
      reply: {
        toolCalls: CHILDREN.map((name) => ({
          name: "fork",
          arguments: { name, prompt: `${SECRET} task for ${name}`, context: "fresh" },
        })),
      },
    },
    {
      agent: "root",
      match: (req) =>
        lastRole(req) === "tool" &&
        !req.messages.some((m) => m.tool_calls?.some((c) => c.function.name === "wait")),
      // The root's turn holds `-p`'s one slot until this answer comes: the workers have that long
      // to claim the children it forked, however loaded the machine (a waiting root frees it).
      reply: {
        delayMs: rootHoldMs,
        toolCalls: [{ name: "wait", arguments: { timeout: 60, from_agents: CHILDREN } }],
      },
    },
    { agent: "root", reply: { text: "all reported" } },
    ...CHILDREN.map((name) => ({
      agent: name,
      match: (req: RecordedRequest) => lastRole(req) === "user",
      reply: {
        delayMs: childDelayMs,
        toolCalls: [{ name: "send", arguments: { to: "parent", message: `${name} done` } }],
      },
    })),
    ...CHILDREN.map((name) => ({ agent: name, reply: { text: "sent" } })),
  ]);
}

function configFile(extra: Record<string, unknown>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "warren-otel-"));
  const file = path.join(dir, "config.json");
  writeFileSync(file, JSON.stringify({ lease_seconds: 3, ...extra }));
  return file;
}

async function untilOutput(
  proc: ReturnType<typeof startWarren>,
  text: string,
  ms: number,
): Promise<void> {
  const start = Date.now();
  let seen = "";
  proc.child.stdout!.on("data", (d: Buffer) => (seen += d.toString()));
  while (!seen.includes(text)) {
    if (Date.now() - start > ms) throw new Error(`no "${text}" within ${ms} ms`);
    if (proc.child.exitCode !== null) throw new Error(`exited before "${text}"`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function stopProc(proc: ReturnType<typeof startWarren>): Promise<unknown> {
  if (proc.child.exitCode === null) proc.child.kill("SIGTERM");
  return proc.done;
}

const byName = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);

interface Metric {
  name: string;
  points: { attributes: Record<string, unknown> }[];
}

/** Every metric received over http/json, with its data points' attributes. */
function metricsOf(receiver: OtlpReceiver): Metric[] {
  type Raw = Record<string, { dataPoints?: { attributes?: [] }[] } | string>;
  return receiver.json
    .filter((b) => b.path === "/v1/metrics")
    .flatMap(
      (b) =>
        (b.body as { resourceMetrics?: { scopeMetrics?: { metrics?: Raw[] }[] }[] })
          .resourceMetrics ?? [],
    )
    .flatMap((r) => r.scopeMetrics ?? [])
    .flatMap((s) => s.metrics ?? [])
    .map((m) => {
      const data = Object.values(m).find((v) => typeof v === "object") as
        { dataPoints?: { attributes?: [] }[] } | undefined;
      return {
        name: String(m.name),
        points: (data?.dataPoints ?? []).map((p) => ({ attributes: attributesOf(p.attributes) })),
      };
    });
}

/** Every log record received over http/json. */
function logsOf(
  receiver: OtlpReceiver,
): { body: unknown; traceId: string; attributes: Record<string, unknown> }[] {
  type Raw = { body?: { stringValue?: string }; traceId?: string; attributes?: [] };
  return receiver.json
    .filter((b) => b.path === "/v1/logs")
    .flatMap(
      (b) =>
        (b.body as { resourceLogs?: { scopeLogs?: { logRecords?: Raw[] }[] }[] }).resourceLogs ??
        [],
    )
    .flatMap((r) => r.scopeLogs ?? [])
    .flatMap((s) => s.logRecords ?? [])
    .map((l) => ({
      body: l.body?.stringValue,
      traceId: String(l.traceId ?? "").toLowerCase(),
      attributes: attributesOf(l.attributes),
    }));
}

describe("OpenTelemetry export", () => {
  it("exports a fan-in across two worker processes as one trace, children under the fork spans", async () => {
    const { fake, receiver } = await rig();
    scriptFanIn(fake, 300, 3000);
    const env = () =>
      warrenEnv({
        databaseUrl: database().url,
        modelUrl: fake.baseURL,
        extra: {
          WARREN_CONFIG: configFile({}),
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_SERVICE_NAME: "warren-test",
          OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test",
        },
      });
    const workers = [startWarren(["worker"], env()), startWarren(["worker"], env())];
    for (const w of workers) cleanups.push(() => stopProc(w));
    await Promise.all(workers.map((w) => untilOutput(w, "worker running", 60_000)));
    // One slot for -p: its root forks while holding it, so the workers claim the children.
    const run = await runWarren(["-p", "fan out", "--json", "--timeout", "90"], {
      ...env(),
      WARREN_CONCURRENCY: "1",
    });
    expect(run.code, run.stderr).toBe(0);
    // The workers flush what they hold when they stop.
    await Promise.all(workers.map(stopProc));
    const spans = receiver.spans;
    const roots = byName(spans, "invoke_agent root");
    expect(roots.length).toBeGreaterThan(0);
    const traceId = roots[0]!.traceId;
    // One trace for the whole tree.
    expect(
      new Set(spans.filter((s) => s.name.startsWith("invoke_agent")).map((s) => s.traceId)),
    ).toEqual(new Set([traceId]));
    const forks = byName(spans, "execute_tool fork");
    expect(forks).toHaveLength(CHILDREN.length);
    const forkIds = new Set(forks.map((s) => s.spanId));
    for (const name of CHILDREN) {
      const runs = byName(spans, `invoke_agent ${name}`);
      expect(runs.length, name).toBeGreaterThan(0);
      for (const r of runs) {
        expect(r.traceId).toBe(traceId);
        expect(forkIds.has(r.parentSpanId), `${name}'s run under a fork span`).toBe(true);
        expect(r.attributes["gen_ai.agent.name"]).toBe(name);
        expect(r.attributes["warren.parent.id"]).toBe(roots[0]!.attributes["gen_ai.agent.id"]);
        expect(r.attributes["warren.tree.id"]).toBe(roots[0]!.attributes["warren.tree.id"]);
      }
    }
    // The context crossed processes through the database: a child run by a worker process
    // descends from a fork span that `warren -p` exported.
    const pidOf = (s: ReceivedSpan) => s.resource["process.pid"];
    const forkPid = new Map(forks.map((f) => [f.spanId, pidOf(f)]));
    const childRuns = CHILDREN.flatMap((n) => byName(spans, `invoke_agent ${n}`));
    const crossed = childRuns.filter((r) => forkPid.get(r.parentSpanId) !== pidOf(r));
    expect(crossed.length, "children run by another process than their fork").toBeGreaterThan(0);
    process.stderr.write(
      `otel: ${crossed.length}/${childRuns.length} child runs in another process than their fork, ` +
        `${new Set(childRuns.map(pidOf)).size} processes ran children\n`,
    );
    // Model requests: GenAI attributes, usage, under a run span of the same trace.
    const chats = spans.filter((s) => s.name === "chat fake-model");
    expect(chats.length).toBe(fake.requests.length);
    for (const chat of chats) {
      expect(chat.traceId).toBe(traceId);
      expect(chat.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "fake-model",
        "gen_ai.response.model": "fake-model",
        "gen_ai.usage.input_tokens": 10,
        "gen_ai.usage.output_tokens": 5,
      });
      expect(chat.attributes).toHaveProperty("gen_ai.usage.cache_read.input_tokens");
    }
    const sends = byName(spans, "execute_tool send");
    expect(sends).toHaveLength(CHILDREN.length);
    for (const send of sends) {
      expect(send.attributes).toMatchObject({
        "gen_ai.tool.name": "send",
        "warren.tool.outcome": "ok",
        "warren.approval.decision": "allow",
      });
      expect(typeof send.attributes["gen_ai.tool.call.id"]).toBe("string");
    }
    // Mail links sender and receiver: the root's wait links to every child's send (span links),
    // each link naming the mail it took.
    const [wait] = byName(spans, "execute_tool wait");
    expect(wait).toBeDefined();
    const linked = (s: { traceId: string; spanId: string }) => `${s.traceId}/${s.spanId}`;
    expect(new Set(wait!.links.map(linked))).toEqual(new Set(sends.map(linked)));
    for (const link of wait!.links) expect(typeof link.attributes["warren.mail.id"]).toBe("number");
    expect(roots[0]!.resource).toMatchObject({
      "service.name": "warren-test",
      "deployment.environment": "test",
    });
    // Metrics and logs went the same way.
    expect(receiver.json.some((b) => b.path === "/v1/metrics")).toBe(true);
    // log_content is off: no prompt text anywhere in what was exported.
    expect(JSON.stringify(receiver.json)).not.toContain(SECRET);
  }, 180_000);

  it("exports prompt text only with telemetry.log_content", async () => {
    const { fake, receiver } = await rig();
    scriptFanIn(fake, 0);
    const env = warrenEnv({
      databaseUrl: database().url,
      modelUrl: fake.baseURL,
      extra: {
        WARREN_CONFIG: configFile({
          telemetry: { endpoint: receiver.url, protocol: "http/json", log_content: true },
        }),
      },
    });
    const run = await runWarren(["-p", "fan out", "--json", "--timeout", "60"], env);
    expect(run.code, run.stderr).toBe(0);
    const forks = byName(receiver.spans, "execute_tool fork");
    expect(forks).toHaveLength(CHILDREN.length);
    expect(String(forks[0]!.attributes["gen_ai.tool.call.arguments"])).toContain(SECRET);
  }, 120_000);

  it("links the run that takes mail in to the span that sent it (a child's final answer)", async () => {
    const { fake, receiver } = await rig();
    // The root forks and ends its turn; the child's answer is mailed for it and wakes the root.
    fake.script([
      {
        agent: "root",
        reply: {
          toolCalls: [{ name: "fork", arguments: { name: "c1", prompt: "go", context: "fresh" } }],
        },
      },
      { agent: "root", reply: { text: "forked" } },
      { agent: "root", reply: { text: "thanks" } },
      { agent: "c1", reply: { delayMs: 300, text: "c1 result" } },
    ]);
    const env = exportingEnv(fake, receiver);
    const run = await runWarren(["-p", "fan out", "--json", "--timeout", "60"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(fake.requests).toHaveLength(4);
    const [child] = byName(receiver.spans, "invoke_agent c1");
    expect(child).toBeDefined();
    const links = byName(receiver.spans, "invoke_agent root").flatMap((r) => r.links);
    expect(links).toEqual([
      {
        traceId: child!.traceId,
        spanId: child!.spanId,
        attributes: { "warren.mail.id": expect.any(Number) },
      },
    ]);
  }, 60_000);

  it("exports every metric, and denied calls and model errors as log events without content", async () => {
    const { fake, receiver } = await rig();
    // A call a person approves (a wait), one the person refuses, then a model error ends the turn.
    fake.script([
      {
        agent: "root",
        reply: { toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] },
      },
      {
        agent: "root",
        reply: { toolCalls: [{ name: "bash", arguments: { command: `rm -rf ${SECRET}` } }] },
      },
      { agent: "root", reply: { status: 400, text: "the model refused" } },
    ]);
    const env = warrenEnv({
      databaseUrl: database().url,
      modelUrl: fake.baseURL,
      extra: {
        WARREN_CONFIG: configFile({
          prices: { "fake-model": { input: 1, output: 2 } },
          telemetry: { endpoint: receiver.url, protocol: "http/json" },
        }),
      },
    });
    const proc = startWarren(["-p", "go", "--json", "--timeout", "60", "--approve", "ask"], env);
    cleanups.push(() => stopProc(proc));
    const db = database().db;
    const pending = (after: number) =>
      until("an approval request", async () => (await listPending(db)).find((p) => p.id > after));
    const allowed = await pending(0);
    await answerApproval(db, allowed.id, { allow: true, by: "person (test)" });
    const refused = await pending(allowed.id);
    await answerApproval(db, refused.id, { allow: false, by: "person (test)" });
    const run = await proc.done;
    expect(run.stdout).toContain("the model refused");
    const names = new Set(metricsOf(receiver).map((m) => m.name));
    for (const name of [
      "gen_ai.client.token.usage",
      "warren.cost",
      "warren.model.requests",
      "warren.tool.calls",
      "warren.approval.wait",
      "warren.agents",
    ]) {
      expect(names, name).toContain(name);
    }
    const outcomes = metricsOf(receiver)
      .filter((m) => m.name === "warren.tool.calls")
      .flatMap((m) => m.points.map((p) => p.attributes.outcome));
    expect(outcomes).toEqual(expect.arrayContaining(["ok", "NOT_ALLOWED"]));
    const events = logsOf(receiver);
    const denied = events.find((e) => e.attributes["event.name"] === "warren.tool.denied");
    expect(denied?.body).toBe("bash was not allowed");
    expect(denied?.traceId).toBe(byName(receiver.spans, "execute_tool bash")[1]?.traceId);
    const failed = events.find((e) => e.attributes["event.name"] === "warren.model.error");
    expect(failed?.body).toContain("the model refused");
    // The refused command names the secret: neither its arguments nor the reason went out.
    expect(JSON.stringify(receiver.json)).not.toContain(SECRET);
  }, 60_000);

  it("gives bash the call's span as TRACEPARENT", async () => {
    const { fake, receiver } = await rig();
    fake.script([
      {
        agent: "root",
        reply: { toolCalls: [{ name: "bash", arguments: { command: "echo TP=$TRACEPARENT" } }] },
      },
      { agent: "root", reply: { text: "done" } },
    ]);
    const env = exportingEnv(fake, receiver);
    const run = await runWarren(["-p", "run it", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    const [bash] = byName(receiver.spans, "execute_tool bash");
    expect(bash).toBeDefined();
    const result = fake.requests[1]!.messages.find((m) => m.role === "tool")!.content!;
    expect(result).toContain(`TP=00-${bash!.traceId}-${bash!.spanId}-01`);
  }, 60_000);

  it("sends http/protobuf by default", async () => {
    const { fake, receiver } = await rig();
    fake.script({ agent: "root", reply: { text: "hello" } });
    const env = warrenEnv({
      databaseUrl: database().url,
      modelUrl: fake.baseURL,
      extra: { WARREN_CONFIG: configFile({}), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    const run = await runWarren(["-p", "hi", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    const traces = receiver.protobuf.filter((b) => b.path === "/v1/traces");
    expect(traces.length).toBeGreaterThan(0);
    expect(receiver.json).toEqual([]);
    // The span names travel as protobuf strings.
    expect(Buffer.concat(traces.map((t) => t.body)).toString("latin1")).toContain(
      "invoke_agent root",
    );
  }, 60_000);

  it("an unreachable collector costs one warning line, not a hang", async () => {
    const fake = await startFakeModel();
    cleanups.push(() => fake.close());
    scriptFanIn(fake, 0);
    const env = warrenEnv({
      databaseUrl: database().url,
      modelUrl: fake.baseURL,
      extra: {
        WARREN_CONFIG: configFile({}),
        // Port 9 (discard) on loopback: nothing listens, the connection is refused.
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
        WARREN_WORKER_THREADS: "2",
      },
    });
    const started = Date.now();
    const run = await runWarren(["-p", "fan out", "--json", "--timeout", "60"], env);
    const ms = Date.now() - started;
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stderr.split("\n").filter((l) => l.includes("telemetry"));
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).toContain("cannot export to http://127.0.0.1:9");
    process.stderr.write(`otel: -p with an unreachable collector took ${ms} ms\n`);
    expect(ms).toBeLessThan(20_000);
  }, 60_000);
});
