// A response's forks in one statement (fork-batch.ts, migrations/0018_fork_set.sql): one
// round trip and one commit for them all, each call with its own result or refusal exactly as
// it would have had alone, and exactly once when the statement's reply is lost.
import { sql } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendEvent } from "../../src/agents/events.js";
import { DEFAULT_LIMITS } from "../../src/agents/limits.js";
import { createTree, forkAgent, listTree } from "../../src/agents/tree.js";
import { byAge } from "../../src/ui/views/navigation.js";
import { closeDb, createDb, type Db } from "../../src/db/client.js";
import type { AgentToolContext } from "../../src/tools/agent-context.js";
import { forkTool } from "../../src/tools/fork.js";
import type { ToolOutcome } from "../../src/tools/tool.js";
import { useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { usePgProxy } from "../support/use-pg-proxy.js";
import { toolContext } from "../support/tool-context.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
const proxy = usePgProxy(() => database().url);

let db: Db;
let rootId: string;
let assistantEventId: number;

beforeEach(async () => {
  // The calls go through the proxy, which counts their statements and can lose a reply.
  db = createDb(proxy().urlFor(database().url), { max: 2 });
  const root = await createTree(database().db, { name: "root" });
  rootId = root.id;
  await forkAgent(database().db, root.id, { name: "first" });
  await database().db.execute(
    sql`update agents set lease_owner = 'w1', state = 'running' where id = ${root.id}`,
  );
  assistantEventId = (await appendEvent(database().db, root.id, "assistant", "", {})).id;
});

afterEach(async () => {
  await closeDb(db);
});

/** The context of the root's call `callId` in one response, as runToolCalls gives each call. */
function callContext(callId: string, extra: Partial<AgentToolContext> = {}) {
  return toolContext(db, bus(), rootId, {
    fence: { owner: "w1", epoch: 0 },
    assistantEventId,
    toolCallId: callId,
    ...extra,
  });
}

/** The calls of one response, started together as runToolCalls starts them. */
async function forkAll(
  names: string[],
  extra: Partial<AgentToolContext> = {},
): Promise<ToolOutcome[]> {
  const contexts = await Promise.all(names.map((_, i) => callContext(`call_${i}`, extra)));
  return Promise.all(
    names.map((name, i) => forkTool.run({ name, prompt: `work on ${name}` }, contexts[i]!)),
  );
}

const batchStatements = () =>
  [...proxy().traffic().byStatement].filter(([text]) => /warren_fork_batch\(/.test(text));

async function children(): Promise<string[]> {
  const rows = await database().db.execute<{ name: string }>(
    sql`select name from agents where parent_id = ${rootId} order by created_at, name`,
  );
  return rows.rows.map((r) => r.name);
}

async function resultsRecorded(): Promise<number> {
  const rows = await database().db.execute<{ n: number }>(
    sql`select count(*)::int as n from events where agent_id = ${rootId} and kind = 'tool_result'`,
  );
  return rows.rows[0]!.n;
}

describe("the forks of one response", () => {
  it("commit in one statement, each call with its own child and result, counted", async () => {
    proxy().resetTraffic();
    const outcomes = await forkAll(["a", "b", "c", "d", "e"]);
    expect(outcomes.map((o) => o.ok && (o.value as { name: string }).name)).toEqual([
      "a",
      "b",
      "c",
      "d",
      "e",
    ]);
    expect(batchStatements().map(([, n]) => n)).toEqual([1]);
    expect(proxy().traffic().commits).toBe(1);
    expect(await children()).toEqual(["first", "a", "b", "c", "d", "e"]);
    const counted = await database().db.execute<{ n: number }>(
      sql`select tool_calls as n from agents where id = ${rootId}`,
    );
    expect(counted.rows[0]!.n).toBe(5);
  });

  it("are listed in call order everywhere, though they share created_at (fork_seq, 0033)", async () => {
    // Against the alphabet and with random ids: only the fork's sequence says which came first.
    const names = ["zulu", "yankee", "xray", "whisky", "victor", "uniform", "tango", "sierra"];
    await forkAll(names);
    const tree = await listTree(database().db, rootId);
    const kids = tree.filter((a) => a.parent_id === rootId && a.name !== "first");
    expect(new Set(kids.map((a) => new Date(a.created_at).getTime())).size).toBe(1);
    expect(kids.map((a) => a.name)).toEqual(names);
    expect(
      [...kids]
        .reverse()
        .sort(byAge)
        .map((a) => a.name),
    ).toEqual(names);
  });

  it("refuses a call as it would alone: a twin of an earlier call, then the limit", async () => {
    // "first" exists: two more fit; the second "a" is a twin of the first, "c" is over.
    const limits = { ...DEFAULT_LIMITS, maxChildren: 3 };
    const outcomes = await forkAll(["a", "b", "a", "c"], { limits });
    expect(outcomes.map((o) => (o.ok ? "ok" : o.error.code))).toEqual([
      "ok",
      "ok",
      "INVALID_ARGS",
      "LIMIT_EXCEEDED",
    ]);
    expect(outcomes[2]).toMatchObject({ error: { message: expect.stringMatching(/named "a"/) } });
    expect(await children()).toEqual(["first", "a", "b"]);
  });

  it("a call sent twice in one response forks once, and both get its result", async () => {
    // A model server that repeats a tool call id: one key, so one child and one result.
    const first = await callContext("call_0");
    const repeat = await callContext("call_0");
    const other = await callContext("call_1");
    proxy().resetTraffic();
    const outcomes = await Promise.all([
      forkTool.run({ name: "a", prompt: "work on a" }, first),
      forkTool.run({ name: "a", prompt: "work on a" }, repeat),
      forkTool.run({ name: "b", prompt: "work on b" }, other),
    ]);
    expect(batchStatements().map(([, n]) => n)).toEqual([1]);
    expect(outcomes[0]).toMatchObject({ ok: true, value: { name: "a" } });
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[2]).toMatchObject({ ok: true, value: { name: "b" } });
    expect(await children()).toEqual(["first", "a", "b"]);
    expect(await resultsRecorded()).toBe(2);
  });

  it("a lost reply: the retry answers each call with its recorded result, forking nothing twice", async () => {
    proxy().dropCommits({ statement: /warren_fork_batch/, max: 1 });
    const outcomes = await forkAll(["a", "b", "c"]);
    expect(proxy().dropped()).toHaveLength(1);
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(await children()).toEqual(["first", "a", "b", "c"]);
    expect(await resultsRecorded()).toBe(3);
  });

  it("a call recorded by an earlier attempt gets that result beside a new call's fork", async () => {
    const [earlier] = await forkAll(["a"]);
    // Its child is dead by now, so its name is free: only the key stops a second "a".
    await database().db.execute(sql`update agents set state = 'dead' where name = 'a'`);
    const again = await callContext("call_0");
    const other = await callContext("call_1");
    proxy().resetTraffic();
    const [replayed, made] = await Promise.all([
      forkTool.run({ name: "a", prompt: "work on a" }, again),
      forkTool.run({ name: "b", prompt: "work on b" }, other),
    ]);
    expect(batchStatements().map(([, n]) => n)).toEqual([1]);
    expect(replayed).toEqual(earlier);
    expect(made).toMatchObject({ ok: true, value: { name: "b" } });
    // The batch, and before it the read of the tree's names (agents/names.ts: a name that
    // passes for another agent's is refused before the batch).
    expect(proxy().traffic().statements).toBe(2);
    expect(await children()).toEqual(["first", "a", "b"]);
    expect(await resultsRecorded()).toBe(2);
  });
});
