// A task handed to a blocked claimer in the add's own statement (board.ts, ADD_TASK): the claimer
// returns on the board's NOTIFY without a statement of its own, and the claim call's key keeps
// one result per call whoever records it — the add, the claim itself, an interrupt. A handoff
// never goes to a claimer whose lease has moved on or that is dead, never jumps an older ready
// task, and a claim mid-look while an add hands it a task returns that task and claims no other.
import { sql } from "drizzle-orm";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { LeaseLost } from "../../src/agents/errors.js";
import { appendEvent } from "../../src/agents/events.js";
import { createTree, forkAgent, killAgent } from "../../src/agents/tree.js";
import { closeDb, createDb, type Db } from "../../src/db/client.js";
import { eventKey } from "../../src/agents/event-keys.js";
import { addTask } from "../../src/tasks/board.js";
import type { AgentToolContext } from "../../src/tools/agent-context.js";
import { taskClaimTool } from "../../src/tools/task-claim.js";
import type { ToolOutcome } from "../../src/tools/tool.js";
import { useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { hold } from "../support/hold.js";
import { blockedOrSettled } from "../support/locks.js";
import { toolContext } from "../support/tool-context.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
let db: Db;
let rootId: string;
let workerIds: string[];

beforeEach(async () => {
  db = database().db;
  const root = await createTree(db, { name: "root" });
  rootId = root.id;
  workerIds = [];
  for (const name of ["w1", "w2", "w3"]) {
    workerIds.push((await forkAgent(db, root.id, { name, prompt: "work" })).id);
  }
  await db.execute(sql`update agents set lease_owner = 'host', state = 'running'
                        where tree_id = ${root.id}`);
  // A task the root holds keeps the board open: a claim blocks instead of answering "empty".
  const held = await add("held");
  await db.execute(
    sql`update tasks set state = 'claimed', claimed_by = ${rootId} where id = ${held}`,
  );
});

function add(title: string, extra: { detail?: string; dependsOn?: string[] } = {}) {
  return addTask(db, { treeId: rootId, createdBy: rootId, title, ...extra });
}

/** A fresh claim call of `agentId` (its own call id and assistant event), leased by "host". */
async function claimCall(agentId: string, extra: Partial<AgentToolContext> = {}) {
  const assistant = await appendEvent(db, agentId, "assistant", "", { tool_calls: [] });
  const ctx = await toolContext(extra.db ?? db, bus(), agentId, {
    fence: { owner: "host", epoch: 0 },
    assistantEventId: assistant.id,
    ...extra,
  });
  const key = eventKey.toolResult(ctx.assistantEventId, ctx.toolCallId);
  return { ctx, key };
}

/** A claim that blocks (nothing ready), resolved once it is registered for a handoff. */
async function blockedClaim(agentId: string, extra: Partial<AgentToolContext> = {}) {
  const { ctx, key } = await claimCall(agentId, extra);
  const claim = taskClaimTool.run({ timeout: 30 }, ctx);
  await registered(agentId, key);
  return { claim, key };
}

async function registered(agentId: string, key: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const rows = await db.execute(
        sql`select 1 from task_waits where agent_id = ${agentId} and key = ${key}`,
      );
      expect(rows.rows).toHaveLength(1);
    },
    { timeout: 5_000, interval: 10 },
  );
}

async function registrations(): Promise<number> {
  const rows = await db.execute<{ n: number }>(
    sql`select count(*)::int as n from task_waits where tree_id = ${rootId} and key is not null`,
  );
  return rows.rows[0]!.n;
}

/** The task's row: `handed` when it went in claimed, in the add's own transaction. */
async function task(id: string) {
  const rows = await db.execute<{
    state: string;
    claimed_by: string | null;
    claim_key: string | null;
    handed: boolean;
  }>(sql`select state, claimed_by, claim_key, coalesce(claimed_at = created_at, false) as handed
           from tasks where id = ${id}`);
  return rows.rows[0]!;
}

function value(outcome: ToolOutcome): Record<string, unknown> {
  if (!outcome.ok) throw new Error(`tool failed: ${JSON.stringify(outcome.error)}`);
  return outcome.value as Record<string, unknown>;
}

describe("an add hands its task to a blocked claimer", () => {
  it("in its own statement: the claimer returns on the NOTIFY without a statement of its own", async () => {
    const claimerDb = createDb(database().url, { max: 1 });
    try {
      const first = await add("first");
      await db.execute(sql`update tasks set state = 'done', result = 'one', claimed_by = ${rootId}
                            where id = ${first}`);
      const { claim, key } = await blockedClaim(workerIds[0]!, { db: claimerDb });
      let statements = 0;
      claimerDb.$client.on("acquire", () => statements++);
      const added = await add("third", { detail: "the detail", dependsOn: [first] });
      const outcome = await claim;
      expect(statements).toBe(0);
      expect(value(outcome)).toEqual({
        task_id: added,
        title: "third",
        detail: "the detail",
        depends_on: [{ task_id: first, title: "first", result: "one" }],
      });
      expect(await task(added)).toEqual({
        state: "claimed",
        claimed_by: workerIds[0],
        claim_key: `${workerIds[0]}:${key}`,
        handed: true,
      });
      // Recorded as the claim records it: the call's key, its data, counted once.
      const event = await db.execute<{ id: string; content: string; data: unknown }>(
        sql`select id, content, data from events where agent_id = ${workerIds[0]!} and key = ${key}`,
      );
      expect(event.rows).toHaveLength(1);
      expect(outcome.ok && outcome.recordedEventId).toBe(Number(event.rows[0]!.id));
      expect(JSON.parse(event.rows[0]!.content)).toEqual(value(outcome));
      expect(event.rows[0]!.data).toMatchObject({ name: "task_claim" });
      const counted = await db.execute<{ tool_calls: number }>(
        sql`select tool_calls from agents where id = ${workerIds[0]!}`,
      );
      expect(counted.rows[0]!.tool_calls).toBe(1);
      expect(await registrations()).toBe(0);
    } finally {
      await closeDb(claimerDb);
    }
  });

  it("a result too large for the notification is read by its key", async () => {
    const { claim } = await blockedClaim(workerIds[0]!);
    const detail = "x".repeat(6_000);
    const added = await add("big", { detail });
    expect(value(await claim)).toMatchObject({ task_id: added, detail });
    expect((await task(added)).handed).toBe(true);
  });

  it("to the claimer blocked longest; the next add to the next one", async () => {
    const first = await blockedClaim(workerIds[0]!);
    const second = await blockedClaim(workerIds[1]!);
    const a = await add("a");
    expect(value(await first.claim).task_id).toBe(a);
    expect(await task(a)).toMatchObject({ claimed_by: workerIds[0], handed: true });
    const b = await add("b");
    expect(value(await second.claim).task_id).toBe(b);
    expect(await task(b)).toMatchObject({ claimed_by: workerIds[1], handed: true });
  });

  it("not a task whose dependency is not done: it goes in pending", async () => {
    const { claim } = await blockedClaim(workerIds[0]!);
    const open = await db.execute<{ id: string }>(sql`
      insert into tasks (tree_id, title, state, claimed_by) values (${rootId}, 'open', 'claimed', ${rootId})
      returning id`);
    const later = await add("later", { dependsOn: [open.rows[0]!.id] });
    expect(await task(later)).toMatchObject({ state: "pending", handed: false });
    expect(await registrations()).toBe(1);
    await db.execute(
      sql`update tasks set state = 'done', result = 'r' where id = ${open.rows[0]!.id}`,
    );
    // Woken by the completion, the claimer takes it itself.
    expect(value(await claim).task_id).toBe(later);
    expect(await task(later)).toMatchObject({ claimed_by: workerIds[0], handed: false });
  });
});

describe("an add hands nothing", () => {
  it("past an older ready task: the oldest ready task is claimed first", async () => {
    const { claim, key } = await blockedClaim(workerIds[0]!);
    // A ready task the claimer has not seen yet (its look was before it, its NOTIFY not heard).
    const older = await db.execute<{ id: string }>(sql`
      insert into tasks (tree_id, title) values (${rootId}, 'older') returning id`);
    const newer = await add("newer");
    expect(await task(newer)).toMatchObject({ state: "pending", handed: false });
    // The add's NOTIFY wakes the claimer, which claims the oldest.
    expect(value(await claim).task_id).toBe(older.rows[0]!.id);
    expect(await task(newer)).toMatchObject({ state: "pending" });
    expect(
      (
        await db.execute(
          sql`select 1 from task_waits where agent_id = ${workerIds[0]!} and key = ${key}`,
        )
      ).rows,
    ).toHaveLength(0);
  });

  it("to a claim whose call has a result already: the task goes in pending", async () => {
    const { claim, key } = await blockedClaim(workerIds[0]!);
    // Another writer records the call's result (an interrupt does) while the registration stays.
    const other = await db.execute<{ id: string }>(sql`
      insert into events (agent_id, kind, content, key)
      values (${workerIds[0]!}, 'tool_result', '{"error":"interrupted"}', ${key}) returning id`);
    const added = await add("for whoever asks next");
    expect(await task(added)).toMatchObject({ state: "pending", claimed_by: null });
    expect(await registrations()).toBe(0);
    // Woken by the add, the claim finds its call answered: it returns that and claims nothing.
    const outcome = await claim;
    expect(outcome).toEqual({
      ok: true,
      value: { error: "interrupted" },
      recordedEventId: Number(other.rows[0]!.id),
    });
    expect(await task(added)).toMatchObject({ state: "pending", claimed_by: null });
  });

  it("to a claim registered under a lease that is no longer the agent's", async () => {
    const settled = (await blockedClaim(workerIds[0]!)).claim.then(
      () => "returned",
      (err: unknown) => err,
    );
    // A takeover: another worker claims the agent (a new epoch).
    await db.execute(
      sql`update agents set lease_owner = 'other', lease_epoch = 1 where id = ${workerIds[0]!}`,
    );
    const added = await add("for the new owner");
    expect(await task(added)).toMatchObject({ state: "pending", claimed_by: null });
    // Woken by the add, the old owner's claim learns its lease is gone and claims nothing.
    expect(await settled).toBeInstanceOf(LeaseLost);
    expect(await task(added)).toMatchObject({ state: "pending", claimed_by: null });
  });

  it("to a dead claimer, and a later claimer is handed it instead", async () => {
    // The runtime stops a killed agent's turn (STOP_CHANNEL): here, its signal.
    const stop = new AbortController();
    const dying = await blockedClaim(workerIds[0]!, { signal: stop.signal });
    const live = await blockedClaim(workerIds[1]!);
    await killAgent(db, { targetId: workerIds[0]!, byAgentId: null });
    const added = await add("for the living");
    expect(value(await live.claim).task_id).toBe(added);
    expect(await task(added)).toMatchObject({ claimed_by: workerIds[1], handed: true });
    stop.abort();
    await expect(dying.claim).rejects.toMatchObject({ name: "AbortError" });
    const dead = await db.execute(
      sql`select 1 from tasks where claimed_by = ${workerIds[0]!} and state = 'claimed'`,
    );
    expect(dead.rows).toHaveLength(0);
  });

  it("to an interrupted claim: it takes its registration out", async () => {
    const abort = new AbortController();
    const { claim } = await blockedClaim(workerIds[0]!, { signal: abort.signal });
    abort.abort();
    await expect(claim).rejects.toMatchObject({ name: "AbortError" });
    await vi.waitFor(async () => expect(await registrations()).toBe(0), { timeout: 5_000 });
    const added = await add("after the interrupt");
    expect(await task(added)).toMatchObject({ state: "pending", claimed_by: null });
  });
});

describe("a claim racing a handoff to it", () => {
  it("waits for the add holding its registration, then returns the handed task and claims no other", async () => {
    const { claim, key } = await blockedClaim(workerIds[0]!);
    // An add mid-handoff, held open: it has locked the registration (ADD_TASK `hw`).
    const open = hold();
    const handing = db.transaction(async (tx) => {
      await tx.execute(
        sql`select 1 from task_waits where agent_id = ${workerIds[0]!} and key = ${key} for update`,
      );
      open.reached();
      await open.released;
      await tx.execute(sql`
        insert into events (agent_id, kind, content, data, key)
        values (${workerIds[0]!}, 'tool_result', '{"task_id":"mine"}', '{}', ${key})`);
      await tx.execute(
        sql`update task_waits set key = null where agent_id = ${workerIds[0]!} and key = ${key}`,
      );
    });
    await open.atPoint;
    // Another add (it skips the locked registration) wakes the claim, whose look must wait for
    // the registration before it records anything under the call's key.
    const other = await add("other");
    expect(await task(other)).toMatchObject({ state: "pending" });
    expect(await blockedOrSettled(db, claim)).toBe("blocked");
    open.release();
    await handing;
    expect(value(await claim)).toEqual({ task_id: "mine" });
    expect(await task(other)).toMatchObject({ state: "pending", claimed_by: null });
  });
});
