// One trace per tree run also when the root's turn changes workers (issue 42 §3): a `warren
// worker` running the root is killed with kill -9 mid-turn, another takes the lease over and
// finishes the turn; its run joins the trace the first one started (kept on the root's row),
// under that run, rather than starting a trace of its own.
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { parseTraceparent } from "../../src/telemetry/traceparent.js";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel } from "../support/fake-model.js";
import { startOtlpReceiver } from "../support/otlp-receiver.js";
import { until } from "../support/until.js";
import { startWarren, warrenEnv } from "../support/warren.js";

const database = useTestDatabase();
let cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  cleanups = [];
});

describe("a root's turn resumed by another worker", () => {
  it("stays in the trace its first run started", async () => {
    const fake = await startFakeModel();
    cleanups.push(() => fake.close());
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    fake.script([
      {
        agent: "root",
        reply: { toolCalls: [{ name: "bash", arguments: { command: "sleep 30" } }] },
      },
      { agent: "root", reply: { text: "done" } },
    ]);
    const { db, url } = database();
    const root = await createTree(db, { prompt: "go", cwd: process.cwd() });
    const env = warrenEnv({
      databaseUrl: url,
      modelUrl: fake.baseURL,
      extra: {
        WARREN_LEASE_SECONDS: "2",
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      },
    });
    const first = startWarren(["worker"], env);
    cleanups.push(async () => first.child.kill("SIGKILL"));
    await until(
      "the root in bash",
      async () =>
        (
          await db.execute<{ n: number }>(sql`
            select count(*)::int as n from events
             where agent_id = ${root.id} and kind = 'tool_call' and data->>'name' = 'bash'`)
        ).rows[0]!.n > 0,
      60_000,
    );
    first.child.kill("SIGKILL");
    await first.done;
    const row = await db.execute<{ trace_context: string | null }>(
      sql`select trace_context from agents where id = ${root.id}`,
    );
    const started = parseTraceparent(row.rows[0]!.trace_context);
    expect(started, "the first run's traceparent on the root's row").toBeDefined();
    const second = startWarren(["worker"], env);
    cleanups.push(async () => second.child.kill("SIGKILL"));
    await until(
      "the root's answer",
      async () =>
        (await db.execute<{ state: string }>(sql`select state from agents where id = ${root.id}`))
          .rows[0]!.state === "idle",
      60_000,
    );
    second.child.kill("SIGTERM");
    await second.done;
    const runs = receiver.spans.filter((s) => s.name === "invoke_agent root");
    const resumed = runs.find((s) => s.attributes["warren.run.end"] === "idle");
    expect(resumed).toBeDefined();
    expect(resumed!.traceId).toBe(started!.traceId);
    expect(resumed!.parentSpanId).toBe(started!.spanId);
    const chats = receiver.spans.filter((s) => s.name === "chat fake-model");
    expect(chats.length).toBeGreaterThan(0);
    for (const chat of chats) expect(chat.traceId).toBe(started!.traceId);
  }, 120_000);
});
