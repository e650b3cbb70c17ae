// A `wait` in flight when its process is killed -9 is resumed by the next worker with the time it
// has left (SPEC §3), not answered "interrupted"; other dangling calls still are.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { useTestDatabase } from "../support/db.js";
import { startWarren, warrenEnv } from "../support/warren.js";
import { until } from "./rig.js";

const database = useTestDatabase();
let fake: FakeModel;

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(async () => {
  await fake.close();
});

const env = () =>
  warrenEnv({
    databaseUrl: database().url,
    modelUrl: fake.baseURL,
    extra: { WARREN_LEASE_SECONDS: "2" },
  });

async function eventsOf(agentId: string) {
  const rows = await database().db.execute<{
    kind: string;
    content: string;
    data: Record<string, unknown> | null;
  }>(sql`select kind, content, data from events where agent_id = ${agentId} order by id`);
  return rows.rows;
}

async function stateOf(agentId: string): Promise<string | undefined> {
  const rows = await database().db.execute<{ state: string }>(
    sql`select state from agents where id = ${agentId}`,
  );
  return rows.rows[0]?.state;
}

describe("a wait killed -9", () => {
  it("is resumed by the next worker with its remaining time", async () => {
    const db = database().db;
    const timeout = 6;
    fake.script([
      { agent: "root", reply: { toolCalls: [{ name: "wait", arguments: { timeout } }] } },
      {
        agent: "root",
        match: (req) => req.lastMessage?.role === "tool",
        reply: { text: "the wait ended" },
      },
    ]);
    const first = startWarren(["-p", "wait a little"], env());
    const rootId = await until("the root to wait", async () => {
      const rows = await db.execute<{ id: string; state: string }>(
        sql`select id, state from agents where parent_id is null order by created_at desc limit 1`,
      );
      return rows.rows[0]?.state === "waiting" ? rows.rows[0].id : undefined;
    });
    first.child.kill("SIGKILL");
    await first.done;
    // Let a known share of the timeout pass while no process runs the agent.
    await new Promise((r) => setTimeout(r, 2500));

    const worker = startWarren(["worker"], env());
    try {
      await until("the resumed wait to end the turn", async () =>
        (await stateOf(rootId)) === "idle" ? true : undefined,
      );
    } finally {
      worker.child.kill("SIGTERM");
      await worker.done;
    }
    const events = await eventsOf(rootId);
    expect(events.map((e) => e.kind)).toEqual([
      "user",
      "assistant",
      "tool_call",
      "system",
      "tool_result",
      "assistant",
    ]);
    // Resumed with what was left (at least the 2.5 s pause is gone), and the time ran out.
    const [left] = events[3]!.data!.remaining_seconds as number[];
    expect(left).toBeGreaterThanOrEqual(0);
    expect(left).toBeLessThanOrEqual(timeout - 2.5);
    expect(events[3]!.content).toMatch(/wait resumed/);
    const result = events[4]!;
    expect(result.data).toMatchObject({ name: "wait" });
    expect(result.data).not.toHaveProperty("interrupted");
    expect(JSON.parse(result.content)).toEqual({ status: "timeout" });
    // The model saw the wait's own answer, not an interruption.
    const last = fake.requests.at(-1)!;
    expect(JSON.parse(last.lastMessage!.content!)).toEqual({ status: "timeout" });
    fake.assertAllUsed();
  });
});
