// The task board (SPEC §3): task_add, task_claim, task_done and task_list called as a turn would
// call them, against a real database: dependencies and their results, empty against timeout, a
// waiting claimer woken by NOTIFY, blocked behind a failure, exactly once under retries, a stale
// lease, and a dead holder's task back to pending.
import { sql } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { LeaseLost } from "../../src/agents/errors.js";
import { appendEvent } from "../../src/agents/events.js";
import { createTree, forkAgent, killAgent } from "../../src/agents/tree.js";
import type { AgentToolContext } from "../../src/tools/agent-context.js";
import { taskAddTool } from "../../src/tools/task-add.js";
import { taskClaimTool } from "../../src/tools/task-claim.js";
import { taskDoneTool } from "../../src/tools/task-done.js";
import { taskListTool } from "../../src/tools/task-list.js";
import type { ToolOutcome } from "../../src/tools/tool.js";
import { useTestDatabase } from "../support/db.js";
import { useBus } from "../support/agents.js";
import { hold } from "../support/hold.js";
import { toolContext } from "../support/tool-context.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
let rootId: string;
let workerIds: string[];

beforeEach(async () => {
  const { db } = database();
  const root = await createTree(db, { name: "root" });
  rootId = root.id;
  workerIds = [];
  for (const name of ["w1", "w2"]) {
    workerIds.push((await forkAgent(db, root.id, { name, prompt: "work" })).id);
  }
  await db.execute(sql`update agents set lease_owner = 'host', state = 'running'
                        where tree_id = ${root.id}`);
});

/** A fresh call (its own call id and assistant event) of agent `agentId`, leased by "host". */
async function call(agentId: string, extra: Partial<AgentToolContext> = {}) {
  const { db } = database();
  const assistant = await appendEvent(db, agentId, "assistant", "", { tool_calls: [] });
  return toolContext(db, bus(), agentId, {
    fence: { owner: "host", epoch: 0 },
    assistantEventId: assistant.id,
    ...extra,
  });
}

function value(outcome: ToolOutcome): Record<string, unknown> {
  if (!outcome.ok) throw new Error(`tool failed: ${JSON.stringify(outcome.error)}`);
  return outcome.value as Record<string, unknown>;
}

async function add(title: string, depends_on?: string[]): Promise<string> {
  const out = await taskAddTool.run(
    { title, ...(depends_on ? { depends_on } : {}) },
    await call(rootId),
  );
  return value(out).task_id as string;
}

async function list(): Promise<{ task_id: string; state: string; claimed_by: string | null }[]> {
  return value(await taskListTool.run({}, await call(rootId))).tasks as never;
}

describe("add, claim, done, list", () => {
  it("a claimed task is done with its result, and the list shows who held it", async () => {
    const id = await add("write the parser");
    const claimed = value(await taskClaimTool.run({ timeout: 0 }, await call(workerIds[0]!)));
    expect(claimed).toMatchObject({ task_id: id, title: "write the parser", depends_on: [] });
    expect(await list()).toMatchObject([
      { task_id: id, state: "claimed", claimed_by: workerIds[0] },
    ]);
    const done = await taskDoneTool.run(
      { task_id: id, result: "parser.ts" },
      await call(workerIds[0]!),
    );
    expect(value(done)).toEqual({ task_id: id, state: "done" });
    expect(await list()).toEqual([
      {
        task_id: id,
        title: "write the parser",
        state: "done",
        claimed_by: workerIds[0],
        result: "parser.ts",
        depends_on: [],
      },
    ]);
  });

  it("hands out the oldest ready task first, and each task to one claimer", async () => {
    const a = await add("a");
    const b = await add("b");
    const first = value(await taskClaimTool.run({ timeout: 0 }, await call(workerIds[0]!)));
    const second = value(await taskClaimTool.run({ timeout: 0 }, await call(workerIds[1]!)));
    expect([first.task_id, second.task_id]).toEqual([a, b]);
  });

  it("only the claimer finishes a task", async () => {
    const id = await add("mine");
    await taskClaimTool.run({ timeout: 0 }, await call(workerIds[0]!));
    const other = await taskDoneTool.run({ task_id: id, result: "x" }, await call(workerIds[1]!));
    expect(other).toMatchObject({ ok: false, error: { code: "NOT_ALLOWED" } });
    const unknown = await taskDoneTool.run(
      { task_id: "00000000-0000-4000-8000-000000000000", result: "x" },
      await call(workerIds[0]!),
    );
    expect(unknown).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
  });

  it("refuses bad arguments with a one-line error", async () => {
    const ctx = await call(rootId);
    expect(await taskAddTool.run({}, ctx)).toMatchObject({ error: { code: "INVALID_ARGS" } });
    expect(await taskAddTool.run({ title: "x", extra: 1 }, ctx)).toMatchObject({
      error: { code: "INVALID_ARGS" },
    });
    expect(await taskAddTool.run({ title: "x", depends_on: ["nope"] }, ctx)).toMatchObject({
      error: { code: "INVALID_ARGS" },
    });
    expect(await taskClaimTool.run({ timeout: -1 }, ctx)).toMatchObject({
      error: { code: "INVALID_ARGS" },
    });
    expect(await taskClaimTool.run({ timeout: 99999 }, ctx)).toMatchObject({
      error: { code: "LIMIT_EXCEEDED" },
    });
  });

  it("a dependency must be a task of the same tree", async () => {
    const { db } = database();
    const other = await createTree(db, { name: "other" });
    const foreign = await taskAddTool.run(
      { title: "elsewhere" },
      await call(other.id, { fence: undefined }),
    );
    const out = await taskAddTool.run(
      { title: "x", depends_on: [value(foreign).task_id as string] },
      await call(rootId),
    );
    expect(out).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
  });
});

describe("dependencies", () => {
  it("a task is claimable only once its dependencies are done, and gets their results", async () => {
    const schema = await add("schema");
    const api = await add("api", [schema]);
    const w1 = workerIds[0]!;
    expect(value(await taskClaimTool.run({ timeout: 0 }, await call(w1))).task_id).toBe(schema);
    // api waits for schema: nothing ready, but not empty either (schema is being worked on).
    expect(value(await taskClaimTool.run({ timeout: 0 }, await call(workerIds[1]!)))).toEqual({
      status: "timeout",
    });
    await taskDoneTool.run({ task_id: schema, result: "tables: users" }, await call(w1));
    const claimed = value(await taskClaimTool.run({ timeout: 0 }, await call(workerIds[1]!)));
    expect(claimed).toEqual({
      task_id: api,
      title: "api",
      detail: null,
      depends_on: [{ task_id: schema, title: "schema", result: "tables: users" }],
    });
  });

  it("a failed dependency blocks its dependants, transitively, and the board is then empty", async () => {
    const a = await add("a");
    const b = await add("b", [a]);
    const c = await add("c", [b]);
    await taskClaimTool.run({ timeout: 0 }, await call(workerIds[0]!));
    await taskDoneTool.run(
      { task_id: a, result: "no disk", failed: true },
      await call(workerIds[0]!),
    );
    const states = Object.fromEntries((await list()).map((t) => [t.task_id, t.state]));
    expect(states).toEqual({ [a]: "failed", [b]: "blocked", [c]: "blocked" });
    expect(value(await taskClaimTool.run({ timeout: 5 }, await call(workerIds[1]!)))).toEqual({
      status: "empty",
    });
  });
});

describe("empty against timeout", () => {
  it("empty when the board has nothing pending or claimed", async () => {
    expect(value(await taskClaimTool.run({ timeout: 5 }, await call(workerIds[0]!)))).toEqual({
      status: "empty",
    });
    const id = await add("x");
    await taskClaimTool.run({ timeout: 0 }, await call(workerIds[0]!));
    await taskDoneTool.run({ task_id: id, result: "ok" }, await call(workerIds[0]!));
    expect(value(await taskClaimTool.run({ timeout: 5 }, await call(workerIds[1]!)))).toEqual({
      status: "empty",
    });
  });

  it("timeout when a task is held by another and none becomes ready in time", async () => {
    await add("held");
    await taskClaimTool.run({ timeout: 0 }, await call(workerIds[0]!));
    const started = Date.now();
    const out = await taskClaimTool.run({ timeout: 0.3 }, await call(workerIds[1]!));
    expect(value(out)).toEqual({ status: "timeout" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
  });
});

describe("a waiting claimer", () => {
  it("is woken by NOTIFY when a task becomes ready, gives its slot up meanwhile", async () => {
    const first = await add("first");
    const second = await add("second", [first]);
    await taskClaimTool.run({ timeout: 0 }, await call(workerIds[0]!));
    const waiting: boolean[] = [];
    let blocked = 0;
    const ctx = await call(workerIds[1]!, {
      setWaiting: async (w) => void waiting.push(w),
      onBlocked: () => blocked++,
    });
    const claim = taskClaimTool.run({ timeout: 30 }, ctx);
    await new Promise((r) => setTimeout(r, 200));
    expect(waiting).toEqual([true]);
    expect(blocked).toBe(1);
    const started = Date.now();
    await taskDoneTool.run({ task_id: first, result: "1" }, await call(workerIds[0]!));
    const claimed = value(await claim);
    // Far below the 15 s safety re-check: the NOTIFY woke it.
    expect(Date.now() - started).toBeLessThan(2000);
    expect(claimed.task_id).toBe(second);
    expect(waiting).toEqual([true, false]);
  });

  it("an added task wakes a claimer waiting on a held one", async () => {
    await add("held");
    await taskClaimTool.run({ timeout: 0 }, await call(workerIds[0]!));
    const claim = taskClaimTool.run({ timeout: 30 }, await call(workerIds[1]!));
    await new Promise((r) => setTimeout(r, 100));
    const added = await add("new");
    expect(value(await claim).task_id).toBe(added);
  });

  it("looks again soon at a ready task it skipped locked: its claimer may roll back", async () => {
    const { db } = database();
    const a = await add("a");
    // Another claimer mid-claim holds the task locked, then rolls back (which NOTIFYs nothing).
    const open = hold();
    const locking = db
      .transaction(async (tx) => {
        await tx.execute(sql`select 1 from tasks where id = ${a} for update`);
        open.reached();
        await open.released;
        tx.rollback();
      })
      .catch(() => undefined);
    await open.atPoint;
    const claim = taskClaimTool.run({ timeout: 30 }, await call(workerIds[0]!));
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    open.release();
    await locking;
    expect(value(await claim).task_id).toBe(a);
    // Far below the 15 s safety re-check.
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("stops at once when interrupted", async () => {
    await add("held");
    await taskClaimTool.run({ timeout: 0 }, await call(workerIds[0]!));
    const abort = new AbortController();
    const claim = taskClaimTool.run(
      { timeout: 30 },
      await call(workerIds[1]!, { signal: abort.signal }),
    );
    await new Promise((r) => setTimeout(r, 100));
    abort.abort();
    await expect(claim).rejects.toMatchObject({ name: "AbortError" });
  });
});

describe("exactly once", () => {
  it("a claim run again (its reply lost) returns the same task and claims no other", async () => {
    const a = await add("a");
    await add("b");
    const ctx = await call(workerIds[0]!);
    const first = await taskClaimTool.run({ timeout: 0 }, ctx);
    const again = await taskClaimTool.run({ timeout: 0 }, ctx);
    expect(value(first).task_id).toBe(a);
    expect(again).toEqual(first);
    expect((await list()).map((t) => t.state)).toEqual(["claimed", "pending"]);
  });

  it("a completion run again returns the recorded answer", async () => {
    const a = await add("a");
    await taskClaimTool.run({ timeout: 0 }, await call(workerIds[0]!));
    const ctx = await call(workerIds[0]!);
    const first = await taskDoneTool.run({ task_id: a, result: "r" }, ctx);
    const again = await taskDoneTool.run({ task_id: a, result: "r" }, ctx);
    expect(again).toEqual(first);
    expect(first.ok).toBe(true);
  });

  it("an add run again adds one task", async () => {
    const ctx = await call(rootId);
    const first = await taskAddTool.run({ title: "once" }, ctx);
    const again = await taskAddTool.run({ title: "once" }, ctx);
    expect(again).toEqual(first);
    expect(await list()).toHaveLength(1);
  });

  it("a worker that lost the lease claims and finishes nothing", async () => {
    const { db } = database();
    const a = await add("a");
    await taskClaimTool.run({ timeout: 0 }, await call(workerIds[0]!));
    await add("b");
    const stale = { fence: { owner: "host", epoch: 0 } };
    await db.execute(sql`update agents set lease_owner = 'other' where id = ${workerIds[0]!}`);
    await expect(
      taskClaimTool.run({ timeout: 0 }, await call(workerIds[0]!, stale)),
    ).rejects.toBeInstanceOf(LeaseLost);
    await expect(
      taskDoneTool.run({ task_id: a, result: "late" }, await call(workerIds[0]!, stale)),
    ).rejects.toBeInstanceOf(LeaseLost);
    expect((await list()).map((t) => t.state)).toEqual(["claimed", "pending"]);
    const results = await db.execute<{ n: number }>(sql`
      select count(*)::int as n from events where agent_id = ${workerIds[0]!} and kind = 'tool_result'`);
    expect(results.rows[0]!.n).toBe(1); // the first claim's only
  });
});

describe("a holder that dies", () => {
  it("killed: its task goes back to pending and the next claimer gets it", async () => {
    const { db } = database();
    const a = await add("a");
    await taskClaimTool.run({ timeout: 0 }, await call(workerIds[0]!));
    const waiting = taskClaimTool.run({ timeout: 30 }, await call(workerIds[1]!));
    await new Promise((r) => setTimeout(r, 100));
    await killAgent(db, { targetId: workerIds[0]!, byAgentId: null });
    expect(value(await waiting).task_id).toBe(a);
    expect(await list()).toMatchObject([
      { task_id: a, state: "claimed", claimed_by: workerIds[1] },
    ]);
  });

  it("a dead agent claims nothing", async () => {
    const { db } = database();
    await add("a");
    await killAgent(db, { targetId: workerIds[0]!, byAgentId: null });
    const out = await taskClaimTool.run({ timeout: 0 }, await call(workerIds[0]!));
    expect(out).toMatchObject({ ok: false, error: { code: "AGENT_DEAD" } });
    expect((await list()).map((t) => t.state)).toEqual(["pending"]);
  });
});
