// Found by the scale-out run (test/scale/scale-out.test.ts): when a turn's lease expires while
// its own worker is still running it (a late heartbeat under load), that worker's claim loop
// claims the agent again — claimNext does not exclude agents it already runs — and launches a
// second runner with the same lease owner. Both pass the lease fence, so the turn runs twice:
// two model calls, two `send`s, the mail delivered twice (the scale-out run saw exactly that). In-process scheduler, real Postgres.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { createBus, type Bus } from "../../src/bus/bus.js";
import { notify, WORK_CHANNEL } from "../../src/bus/channels.js";
import { loadConfig } from "../../src/config/config.js";
import { createOpenAIModel } from "../../src/llm/openai.js";
import { startScheduler, type Scheduler } from "../../src/runtime/scheduler.js";
import { agentNameOf, startFakeModel, type FakeModel } from "../support/fake-model.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();
let fake: FakeModel;
let bus: Bus;
let scheduler: Scheduler;

beforeAll(async () => {
  fake = await startFakeModel();
  bus = await createBus(database().url);
  const config = loadConfig({
    WARREN_CONFIG: "/nonexistent/warren-config.json",
    WARREN_MODEL: "fake",
    OPENAI_BASE_URL: fake.baseURL,
  });
  // A long lease: its heartbeat (every 10 s) cannot renew it during the test on its own.
  scheduler = await startScheduler(
    {
      db: database().db,
      bus,
      model: createOpenAIModel({ baseURL: fake.baseURL, maxRetries: 0 }),
      config,
    },
    { concurrency: 10, leaseSeconds: 30, pollMs: 200 },
  );
});
afterAll(async () => {
  await scheduler.stop();
  await bus.close();
  await fake.close();
});

async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("a lease that expires under its own running worker", () => {
  // The protection: claimNext skips the agents its scheduler already runs (scheduler.ts).
  it("does not make the worker run the same turn a second time", async () => {
    fake.script([
      {
        agent: "slow",
        match: (req) => req.lastMessage?.role === "user",
        reply: {
          delayMs: 3_000,
          toolCalls: [{ name: "send", arguments: { to: "peer", message: "once" } }],
        },
        times: Infinity,
      },
      {
        agent: "slow",
        match: (req) => req.lastMessage?.role === "tool",
        reply: { text: "done" },
        times: Infinity,
      },
      { agent: "peer", reply: { text: "got it" }, times: Infinity },
    ]);
    const db = database().db;
    const root = await createTree(db, { name: "root", model: "fake" });
    const agent = await forkAgent(db, root.id, { name: "slow", prompt: "go", context: "fresh" });
    await forkAgent(db, root.id, { name: "peer", context: "fresh" });
    const firstCalls = () =>
      fake.requests.filter((r) => agentNameOf(r) === "slow" && r.lastMessage?.role === "user")
        .length;
    await until("the first model call", async () => firstCalls() === 1);
    // The heartbeat is late (as under load): the lease has run out while the turn still runs.
    await db.execute(sql`update agents set lease_expires_at = now() - interval '1 second'
                          where id = ${agent.id}`);
    await db.transaction((tx) => notify(tx, WORK_CHANNEL, agent.id));
    await until("the turn's end", async () => {
      const rows = await db.execute<{ state: string }>(
        sql`select state from agents where id = ${agent.id}`,
      );
      return rows.rows[0]!.state === "idle";
    });
    await new Promise((r) => setTimeout(r, 3_500));
    const letters = await db.execute<{ n: number }>(sql`
      select count(*)::int as n from mail where from_id = ${agent.id}`);
    expect({ firstModelCalls: firstCalls(), mails: letters.rows[0]!.n }).toEqual({
      firstModelCalls: 1,
      mails: 1,
    });
  }, 40_000);
});
