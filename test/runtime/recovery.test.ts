// Durability and scale-out end to end: `kill -9` in the middle of a turn, then another process
// resumes it; two `warren worker` processes sharing 20 agents never run a turn twice.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { createTree } from "../../src/agents/tree.js";
import type { Db } from "../../src/db/client.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { useTestDatabase } from "../support/db.js";
import { runWarren, startWarren, warrenEnv } from "../support/warren.js";

const database = useTestDatabase();
let fake: FakeModel;

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(async () => {
  await fake.close();
});
afterEach(() => {
  fake.assertAllUsed();
});

function env() {
  // Short leases so a crashed process's turns are taken over quickly.
  return warrenEnv({
    databaseUrl: database().url,
    modelUrl: fake.baseURL,
    extra: { WARREN_LEASE_SECONDS: "2" },
  });
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function eventsOf(db: Db, agentId: string) {
  const rows = await db.execute<{ kind: string; content: string; data: Record<string, unknown> }>(
    sql`select kind, content, data from events where agent_id = ${agentId} order by id`,
  );
  return rows.rows;
}

async function rootOfLatestTree(db: Db): Promise<string | undefined> {
  const rows = await db.execute<{ id: string }>(
    sql`select id from agents where parent_id is null order by created_at desc limit 1`,
  );
  return rows.rows[0]?.id;
}

async function stateOf(db: Db, id: string): Promise<string | undefined> {
  const rows = await db.execute<{ state: string }>(sql`select state from agents where id = ${id}`);
  return rows.rows[0]?.state;
}

describe("crash recovery", () => {
  it("resumes a turn killed -9 during a tool call: the call gets an interrupted result", async () => {
    const db = database().db;
    fake.script([
      {
        agent: "root",
        reply: { toolCalls: [{ name: "bash", arguments: { command: "sleep 20" } }] },
      },
      {
        agent: "root",
        match: (req) => String(req.lastMessage?.content ?? "").includes("interrupted"),
        reply: { text: "resumed after the crash" },
      },
    ]);
    const first = startWarren(["-p", "run a slow command"], env());
    const rootId = await until("the bash call to start", async () => {
      const id = await rootOfLatestTree(db);
      if (!id) return undefined;
      const events = await eventsOf(db, id);
      return events.some((e) => e.kind === "tool_call") ? id : undefined;
    });
    first.child.kill("SIGKILL");
    await first.done;
    expect(await stateOf(db, rootId)).toBe("running");

    const worker = startWarren(["worker"], env());
    await until("the resumed turn to end", async () =>
      (await stateOf(db, rootId)) === "idle" ? true : undefined,
    );
    worker.child.kill("SIGTERM");
    const stopped = await worker.done;
    expect(stopped.code).toBe(0);

    const events = await eventsOf(db, rootId);
    const result = events.find((e) => e.kind === "tool_result");
    expect(result?.data).toMatchObject({ name: "bash", interrupted: true });
    expect(JSON.parse(result!.content).error.message).toMatch(/interrupted/);
    expect(events.filter((e) => e.kind === "assistant").at(-1)?.content).toBe(
      "resumed after the crash",
    );
  });

  it("keeps mail that arrives while the waiting process is dead; the resumed wait receives it", async () => {
    const db = database().db;
    // SPEC §3: a wait in flight when its worker died is resumed (not interrupted) by the next one.
    fake.script([
      { agent: "root", reply: { toolCalls: [{ name: "wait", arguments: { timeout: 60 } }] } },
      {
        agent: "root",
        match: (req) => String(req.lastMessage?.content ?? "").includes("the mail body"),
        reply: { text: "got it" },
      },
    ]);
    const first = startWarren(["-p", "wait for mail"], env());
    const rootId = await until("the root to wait", async () => {
      const id = await rootOfLatestTree(db);
      return id && (await stateOf(db, id)) === "waiting" ? id : undefined;
    });
    first.child.kill("SIGKILL");
    await first.done;

    // The dead worker's lease is still the root's, so the send hands the mail to the wait it
    // registered (src/mail/handoff.ts): its result, which the resumed turn reads.
    const sent = await runWarren(["send", rootId, "the mail body"], env());
    expect(sent.code).toBe(0);
    const kept = await db.execute(sql`select id from mail where to_id = ${rootId}`);
    expect(kept.rows).toHaveLength(1);

    const worker = startWarren(["worker"], env());
    await until("the resumed root to finish", async () =>
      (await stateOf(db, rootId)) === "idle" ? true : undefined,
    );
    worker.child.kill("SIGTERM");
    await worker.done;

    const mail = await db.execute<{ consumed_by_event: string | null }>(
      sql`select consumed_by_event from mail where to_id = ${rootId}`,
    );
    expect(mail.rows).toHaveLength(1);
    const eventId = mail.rows[0]!.consumed_by_event;
    expect(eventId).not.toBeNull();
    const receiving = await db.execute<{ kind: string; content: string }>(
      sql`select kind, content from events where id = ${eventId}`,
    );
    expect(receiving.rows[0]?.kind).toBe("tool_result");
    expect(JSON.parse(receiving.rows[0]!.content)).toMatchObject({ message: "the mail body" });
  });
});

describe("two workers", () => {
  it("share 20 agents and run each turn exactly once", async () => {
    const db = database().db;
    const names = Array.from({ length: 20 }, (_, i) => `agent-${i}`);
    fake.script(
      names.flatMap((name) => [
        {
          agent: name,
          reply: {
            toolCalls: [{ name: "bash", arguments: { command: `echo ${name}` } }],
            delayMs: 20,
          },
        },
        {
          agent: name,
          match: (req) => req.lastMessage?.role === "tool",
          reply: { text: `${name} done` },
        },
      ]),
    );
    const before = fake.requests.length;
    const workers = [
      startWarren(["worker", "--concurrency", "4"], env()),
      startWarren(["worker", "--concurrency", "4"], env()),
    ];
    const roots = [];
    for (const name of names) roots.push(await createTree(db, { name, prompt: `you are ${name}` }));
    const ids = roots.map((r) => r.id);
    await until(
      "all 20 agents to finish",
      async () => {
        const rows = await db.execute<{ n: number }>(
          sql`select count(*)::int as n from agents where id = any(${sql.param(ids)}::uuid[]) and state = 'idle'`,
        );
        return rows.rows[0]!.n === 20 ? true : undefined;
      },
      60_000,
    );
    for (const w of workers) w.child.kill("SIGTERM");
    const results = await Promise.all(workers.map((w) => w.done));
    expect(results.map((r) => r.code)).toEqual([0, 0]);

    expect(fake.requests.length - before).toBe(40);
    const counts = await db.execute<{ kind: string; n: number }>(sql`
      select kind, count(*)::int as n from events where agent_id = any(${sql.param(ids)}::uuid[])
       group by kind order by kind`);
    expect(Object.fromEntries(counts.rows.map((r) => [r.kind, r.n]))).toEqual({
      user: 20,
      assistant: 40,
      tool_call: 20,
      tool_result: 20,
    });
    const turns = await db.execute<{ name: string; turns: number; tool_calls: number }>(
      sql`select name, turns, tool_calls from agents where id = any(${sql.param(ids)}::uuid[])`,
    );
    expect(turns.rows.filter((r) => r.turns !== 1 || r.tool_calls !== 1)).toEqual([]);
  });
});
