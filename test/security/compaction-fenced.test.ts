// Issue 28 item 6, "compaction is fenced and keyed" (SPEC §5): the summary and the token counters
// a compaction writes are written only while the turn's lease holds (a stale worker writes
// nothing), and once per summarised stretch (a retry or a second worker summarising the same
// older part finds the summary and counts nothing twice).
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAgent } from "../../src/agents/refs.js";
import type { AgentRow } from "../../src/agents/agents.sql.js";
import { appendEvent } from "../../src/agents/events.js";
import { createTree } from "../../src/agents/tree.js";
import { compact } from "../../src/runtime/compaction.js";
import { useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { fakeTurnDeps } from "../support/turn-deps.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
let fake: FakeModel;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(async () => {
  await fake.close();
});

const WINDOW = 2_000;

/** A leased root with a conversation long enough to summarise (epoch 5, owner w1). */
async function longConversation(name: string): Promise<AgentRow> {
  const root = await createTree(database().db, { name, prompt: "go" });
  for (let i = 0; i < 12; i++) {
    await appendEvent(database().db, root.id, "assistant", `answer ${i} ${"x".repeat(300)}`, {});
    await appendEvent(database().db, root.id, "user", `more ${i} ${"y".repeat(300)}`, {});
  }
  await database().db.execute(sql`
    update agents set lease_owner = 'w1', lease_epoch = 5,
                      lease_expires_at = now() + interval '1 minute'
     where id = ${root.id}`);
  return (await getAgent(database().db, root.id)) as AgentRow;
}

async function state(agentId: string) {
  const rows = await database().db.execute<{ summaries: number; input: number }>(sql`
    select (select count(*)::int from events where agent_id = ${agentId} and kind = 'summary')
             as summaries,
           input_tokens::int as input
      from agents where id = ${agentId}`);
  return rows.rows[0]!;
}

function summarising(times: number): void {
  fake.script({
    match: (req) => (req.systemPrompt ?? "").startsWith("You summarise"),
    times,
    reply: {
      text: "Summary: you answered twelve times.",
      usage: { input: 100, output: 10 },
      delayMs: 300,
    },
  });
}

describe("compaction", () => {
  it("by a worker whose lease was taken writes no summary and counts nothing", async () => {
    const agent = await longConversation("stale");
    const before = await state(agent.id);
    summarising(1);
    const stale = fakeTurnDeps(database().db, bus(), fake.baseURL, { owner: "w1", epoch: 4 });
    await expect(
      compact(stale, agent, "fake", WINDOW, new AbortController().signal),
    ).rejects.toMatchObject({ name: expect.stringMatching(/LeaseLost/) as unknown });
    expect(await state(agent.id)).toEqual(before);
    fake.assertAllUsed();
  });

  it("run twice over the same older part (a retry, two workers) writes one summary, counts once", async () => {
    const agent = await longConversation("twice");
    const before = await state(agent.id);
    summarising(2);
    const deps = fakeTurnDeps(database().db, bus(), fake.baseURL, { owner: "w1", epoch: 5 });
    const signal = new AbortController().signal;
    await Promise.all([
      compact(deps, agent, "fake", WINDOW, signal),
      compact(deps, agent, "fake", WINDOW, signal),
    ]);
    expect(await state(agent.id)).toEqual({ summaries: 1, input: before.input + 100 });
    fake.assertAllUsed();
  });
});
