// Effects happen once, fenced by the lease (SPEC §3): fork, send and kill commit with their
// tool_result in one transaction that checks the caller's lease; the same call executed again
// (a replay) finds its result and does nothing; a worker that lost the lease writes nothing.
import { sql } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { LeaseLost } from "../../src/agents/errors.js";
import { appendEvent } from "../../src/agents/events.js";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import type { AgentToolContext } from "../../src/tools/agent-context.js";
import { forkTool } from "../../src/tools/fork.js";
import { killTool } from "../../src/tools/kill.js";
import { sendTool } from "../../src/tools/send.js";
import { waitTool } from "../../src/tools/wait.js";
import { useTestDatabase } from "../support/db.js";
import { useBus } from "../support/agents.js";
import { toolContext } from "../support/tool-context.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
let rootId: string;
let childId: string;

/** A root holding its lease as worker "w1", with one child, and a context for the root's call. */
async function leasedContext(): Promise<AgentToolContext> {
  const { db } = database();
  const root = await createTree(db, { name: "root" });
  rootId = root.id;
  childId = (await forkAgent(db, root.id, { name: "child" })).id;
  await db.execute(
    sql`update agents set lease_owner = 'w1', state = 'running' where id = ${root.id}`,
  );
  const assistant = await appendEvent(db, root.id, "assistant", "", { tool_calls: [] });
  return toolContext(db, bus(), root.id, {
    fence: { owner: "w1", epoch: 0 },
    assistantEventId: assistant.id,
  });
}

async function count(table: "mail" | "agents", where = sql`true`): Promise<number> {
  const rows = await database().db.execute<{ n: number }>(
    sql`select count(*)::int as n from ${sql.raw(table)} where ${where}`,
  );
  return rows.rows[0]!.n;
}

async function results(toolCallId: string): Promise<number> {
  const rows = await database().db.execute<{ n: number }>(sql`
    select count(*)::int as n from events
     where kind = 'tool_result' and data->>'tool_call_id' = ${toolCallId}`);
  return rows.rows[0]!.n;
}

let ctx: AgentToolContext;
beforeEach(async () => {
  ctx = await leasedContext();
});

describe("a call executed twice has one effect", () => {
  it("send: one mail, one result, the same answer", async () => {
    const first = await sendTool.run({ to: "child", message: "once" }, ctx);
    const again = await sendTool.run({ to: "child", message: "once" }, ctx);
    expect(first.ok && again.ok).toBe(true);
    expect(again).toEqual(first);
    expect(await count("mail", sql`to_id = ${childId}`)).toBe(1);
    expect(await results(ctx.toolCallId)).toBe(1);
  });

  it("fork: one child", async () => {
    const first = await forkTool.run({ name: "twin", prompt: "go" }, ctx);
    const again = await forkTool.run({ name: "twin", prompt: "go" }, ctx);
    expect(again).toEqual(first);
    expect(await count("agents", sql`tree_id = ${rootId} and name = 'twin'`)).toBe(1);
    expect(await results(ctx.toolCallId)).toBe(1);
  });

  it("counts the call once, with its result", async () => {
    await sendTool.run({ to: "child", message: "once" }, ctx);
    await sendTool.run({ to: "child", message: "once" }, ctx);
    expect(await count("agents", sql`id = ${rootId} and tool_calls = 1`)).toBe(1);
  });

  it("kill: one cascade, one result", async () => {
    const first = await killTool.run({ agent_id: "child" }, ctx);
    const again = await killTool.run({ agent_id: "child" }, ctx);
    expect(first.ok).toBe(true);
    expect(again).toEqual(first); // not AGENT_DEAD: the recorded answer
    expect(await results(ctx.toolCallId)).toBe(1);
    const killed = await database().db.execute<{ n: number }>(
      sql`select count(*)::int as n from events where agent_id = ${childId} and kind = 'killed'`,
    );
    expect(killed.rows[0]!.n).toBe(1);
  });
});

describe("a consuming wait", () => {
  it("takes one mail and counts the call with its result", async () => {
    const { db } = database();
    await db.execute(sql`
      insert into mail (tree_id, from_id, to_id, body) values (${rootId}, ${childId}, ${rootId}, 'first'),
                                                     (${rootId}, ${childId}, ${rootId}, 'second')`);
    const taken = await waitTool.run({ timeout: 0 }, ctx);
    expect(taken).toMatchObject({ ok: true, value: { message: "first" } });
    expect(await count("mail", sql`to_id = ${rootId} and consumed_at is null`)).toBe(1);
    expect(await count("agents", sql`id = ${rootId} and tool_calls = 1`)).toBe(1);
  });
});

describe("a worker that lost the lease writes nothing", () => {
  beforeEach(async () => {
    // Another worker took the agent over.
    await database().db.execute(sql`update agents set lease_owner = 'w2' where id = ${rootId}`);
  });

  it("send, fork and kill are refused with LeaseLost, leaving no row behind", async () => {
    await expect(sendTool.run({ to: "child", message: "late" }, ctx)).rejects.toBeInstanceOf(
      LeaseLost,
    );
    await expect(forkTool.run({ name: "late", prompt: "go" }, ctx)).rejects.toBeInstanceOf(
      LeaseLost,
    );
    await expect(killTool.run({ agent_id: "child" }, ctx)).rejects.toBeInstanceOf(LeaseLost);
    expect(await count("mail", sql`to_id = ${childId}`)).toBe(0);
    expect(await count("agents", sql`tree_id = ${rootId}`)).toBe(2);
    expect(await count("agents", sql`id = ${childId} and state = 'dead'`)).toBe(0);
    expect(await results(ctx.toolCallId)).toBe(0);
  });

  it("wait consumes nothing, alone or in a fan-in, and records no timeout", async () => {
    const { db } = database();
    await db.execute(
      sql`insert into mail (tree_id, from_id, to_id, body) values (${rootId}, ${childId}, ${rootId}, 'kept')`,
    );
    await expect(waitTool.run({ timeout: 0 }, ctx)).rejects.toBeInstanceOf(LeaseLost);
    await expect(waitTool.run({ timeout: 0, from_agents: ["child"] }, ctx)).rejects.toBeInstanceOf(
      LeaseLost,
    );
    await db.execute(sql`update mail set consumed_at = now() where to_id = ${rootId}`);
    await expect(waitTool.run({ timeout: 0 }, ctx)).rejects.toBeInstanceOf(LeaseLost);
    await db.execute(sql`update mail set consumed_at = null where to_id = ${rootId}`);
    expect(await count("mail", sql`to_id = ${rootId} and consumed_at is null`)).toBe(1);
    expect(await results(ctx.toolCallId)).toBe(0);
  });
});
