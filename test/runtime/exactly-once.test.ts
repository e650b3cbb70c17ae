// Exactly once by construction (README "Exactly once by construction"): the database enforces
// one event per idempotency key and refuses writes stamped with a stale lease epoch, so a write
// retried after its reply was lost, or made by a worker whose lease was taken over, cannot
// record anything twice. Each test here fails with its protection removed (the events_key_idx
// index, the fencing triggers, the per-pass lease check, the replay lookup of a retried wait).
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLeaseLost } from "../../src/agents/errors.js";
import { eventKey, isDuplicateKey } from "../../src/agents/event-keys.js";
import { appendEvent, appendEventOnce, appendToolResult } from "../../src/agents/events.js";
import { createTree, forkAgent, killAgent, setState } from "../../src/agents/tree.js";
import type { Db } from "../../src/db/client.js";
import { waitForMail } from "../../src/mail/wait.js";
import { claimNext, heartbeat } from "../../src/runtime/leases.js";
import { setActivity } from "../../src/feed/publish.js";
import { recordAnswer } from "../../src/runtime/record-answer.js";
import { closeDanglingCalls, runAgent } from "../../src/runtime/turn.js";
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

async function count(query: ReturnType<typeof sql>): Promise<number> {
  const rows = await database().db.execute<{ n: number }>(query);
  return rows.rows[0]!.n;
}

/** A running root claimed by `owner`; returns its id and the epoch of that claim. */
async function claimedRoot(name: string, owner: string) {
  const { db } = database();
  const root = await createTree(db, { name });
  await db.execute(sql`update agents set state = 'running' where id = ${root.id}`);
  const claimed = await claimNext(db, owner, 30, root.tree_id);
  return { id: root.id, epoch: claimed!.lease_epoch };
}

/** Another worker takes the agent over once its lease has expired. */
async function takeOver(id: string, owner: string): Promise<number> {
  const { db } = database();
  await db.execute(
    sql`update agents set lease_expires_at = now() - interval '1 s' where id = ${id}`,
  );
  const claimed = await claimNext(db, owner, 30);
  expect(claimed?.id).toBe(id);
  return claimed!.lease_epoch;
}

describe("the lease epoch is a fencing token the database checks", () => {
  it("a claim raises the epoch; a stale epoch's event and row updates are refused", async () => {
    const { db } = database();
    const { id, epoch } = await claimedRoot("fenced", "w1");
    const newer = await takeOver(id, "w2");
    expect(newer).toBe(epoch + 1);

    const stale = appendEvent(db, id, "error", "late", undefined, { epoch });
    await expect(stale).rejects.toSatisfy(isLeaseLost);
    await expect(setState(db, id, "waiting", { owner: "w1", epoch })).rejects.toSatisfy(
      isLeaseLost,
    );
    expect(await count(sql`select count(*)::int as n from events where content = 'late'`)).toBe(0);

    await appendEvent(db, id, "error", "current", undefined, { epoch: newer });
    await setState(db, id, "waiting", { owner: "w2", epoch: newer });
  });

  it("a stale owner back from an outage writes nothing, not even its dangling calls' results", async () => {
    const { db } = database();
    const { id, epoch } = await claimedRoot("sleeper", "w1");
    // Its turn was running a fork when the network went silent past the lease.
    await appendEvent(
      db,
      id,
      "assistant",
      "",
      { tool_calls: [{ id: "call_1", name: "fork", arguments: '{"name":"x","prompt":"y"}' }] },
      { epoch },
    );
    await takeOver(id, "w2");
    const before = await count(sql`select count(*)::int as n from events where agent_id = ${id}`);

    await runAgent(
      fakeTurnDeps(db, bus(), fake.baseURL, { owner: "w1", epoch }),
      id,
      new AbortController().signal,
    );
    expect(await count(sql`select count(*)::int as n from events where agent_id = ${id}`)).toBe(
      before,
    );
    expect(fake.requests).toHaveLength(0);
  });
});

describe("a kill", () => {
  it("revokes the lease: the killed turn's late tool result is refused, nothing after `killed`", async () => {
    const { db } = database();
    const root = await claimedRoot("killer", "w0");
    const child = await forkAgent(db, root.id, { name: "victim", prompt: "wait on it" });
    const claimed = await claimNext(db, "w1", 30, child.tree_id, [root.id]);
    expect(claimed?.id).toBe(child.id);
    await killAgent(db, { targetId: child.id, byAgentId: null });
    // Its `wait` returned as the kill committed (no NOTIFY heard yet): it records its result.
    const late = appendToolResult(
      db,
      child.id,
      "{}",
      { tool_call_id: "call_w", name: "wait" },
      { epoch: claimed!.lease_epoch },
    );
    await expect(late).rejects.toSatisfy(isLeaseLost);
    const kinds = await db.execute<{ kind: string }>(
      sql`select kind from events where agent_id = ${child.id} order by id`,
    );
    expect(kinds.rows.at(-1)?.kind).toBe("killed");
  });
});

describe("before a model call", () => {
  it("a worker whose agent was taken over and finished learns it (no row left to update)", async () => {
    const { db } = database();
    const { id, epoch } = await claimedRoot("finished-elsewhere", "w1");
    await takeOver(id, "w2");
    await db.execute(
      sql`update agents set state = 'idle', lease_owner = null, lease_expires_at = null where id = ${id}`,
    );
    const thinking = setActivity(db, id, "thinking", { owner: "w1", epoch });
    await expect(thinking).rejects.toSatisfy(isLeaseLost);
  });
});

describe("the lease heartbeat", () => {
  it("skips a row another transaction holds: one locked row delays one lease, not all", async () => {
    const { db } = database();
    const a = await claimedRoot("beat-a", "hb");
    const b = await claimedRoot("beat-b", "hb");
    const holder = await db.$client.connect();
    try {
      await holder.query("begin");
      await holder.query("select 1 from agents where id = $1 for update", [a.id]);
      // Refused after 300 ms if it waited for the lock, which it must not.
      const rows = await db.transaction(async (tx) => {
        await tx.execute(sql`set local lock_timeout = '300ms'`);
        return heartbeat(tx, "hb", [a.id, b.id], 30);
      });
      const byId = new Map(rows.map((r) => [r.id, r.extended]));
      expect(byId).toEqual(
        new Map([
          [a.id, false],
          [b.id, true],
        ]),
      );
    } finally {
      await holder.query("rollback");
      holder.release();
    }
  });
});

describe("a turn resumed after its worker stopped", () => {
  it("is counted once", async () => {
    const { db } = database();
    const { id, epoch } = await claimedRoot("resumed", "w1");
    await appendEvent(db, id, "user", "count me once");
    fake.script([
      { agent: "resumed", reply: { hang: true } },
      { agent: "resumed", reply: { text: "done" } },
    ]);
    const deps = fakeTurnDeps(db, bus(), fake.baseURL, { owner: "w1", epoch });
    const stop = new AbortController();
    const first = runAgent(deps, id, stop.signal);
    while (!fake.requests.some((r) => r.systemPrompt?.includes("resumed"))) {
      await new Promise((r) => setTimeout(r, 20));
    }
    stop.abort(); // the worker stops mid-turn (shutdown): the next run resumes the same turn
    await first;
    await runAgent(deps, id, new AbortController().signal);
    expect(await count(sql`select turns as n from agents where id = ${id}`)).toBe(1);
  });
});

describe("a call answered for a worker that stopped (a takeover, an interrupt)", () => {
  /** A root claimed by w1 whose answer (a bash call, its turn's first) w1 recorded. */
  async function answeredWithCall(name: string) {
    const { db } = database();
    const { id, epoch } = await claimedRoot(name, "w1");
    const prompt = await appendEvent(db, id, "user", "run a command");
    const call = { id: "call_bash", name: "bash", arguments: '{"command":"echo hi"}' };
    const answer = await recordAnswer(
      db,
      { id, tree_id: prompt.tree_id },
      {
        text: "",
        data: { tool_calls: [call] },
        usage: { inputTokens: 1, outputTokens: 1 },
        calls: [call],
        activity: null,
        turnStart: prompt.id,
      },
      { key: eventKey.assistant(prompt.id), epoch, owner: "w1" },
    );
    return { id, epoch, resultKey: eventKey.toolResult(answer.row.id, call.id) };
  }

  const counters = async (id: string) =>
    (
      await database().db.execute<{ turns: number; tool_calls: number }>(
        sql`select turns, tool_calls from agents where id = ${id}`,
      )
    ).rows[0];

  it("is counted once when the worker that took the agent over answers it", async () => {
    const { db } = database();
    const { id, epoch, resultKey } = await answeredWithCall("taken-mid-call");
    // w1's event loop stalled past its lease while the command ran: w2 claims the agent, answers
    // the call `interrupted` and finishes the turn.
    const newer = await takeOver(id, "w2");
    fake.script({
      agent: "taken-mid-call",
      match: (req) => req.lastMessage?.role === "tool",
      reply: { text: "done" },
    });
    await runAgent(
      fakeTurnDeps(db, bus(), fake.baseURL, { owner: "w2", epoch: newer }),
      id,
      new AbortController().signal,
    );
    fake.assertAllUsed();
    // w1 wakes with the command's output: refused (stale epoch, and the call has its result).
    const late = appendToolResult(
      db,
      id,
      '"hi"',
      { tool_call_id: "call_bash", name: "bash" },
      { key: resultKey, epoch },
    );
    await expect(late).rejects.toSatisfy((err) => isLeaseLost(err) || isDuplicateKey(err));
    expect(
      await count(sql`select count(*)::int as n from events
                       where agent_id = ${id} and kind = 'tool_result'`),
    ).toBe(1);
    expect(await counters(id)).toEqual({ turns: 1, tool_calls: 1 });
  });

  it("is counted once when an interrupt answers it, however often that is tried", async () => {
    const { db } = database();
    const { id, epoch, resultKey } = await answeredWithCall("interrupted-mid-call");
    const note = JSON.stringify({ error: { code: "INTERNAL", message: "interrupted" } });
    await closeDanglingCalls(db, id, note, { owner: "w1", epoch });
    // The command's own result, a moment late, is refused by the call's key.
    const late = appendToolResult(
      db,
      id,
      '"hi"',
      { tool_call_id: "call_bash" },
      {
        key: resultKey,
        epoch,
      },
    );
    await expect(late).rejects.toSatisfy(isDuplicateKey);
    await closeDanglingCalls(db, id, note, { owner: "w1", epoch });
    expect(await counters(id)).toEqual({ turns: 1, tool_calls: 1 });
  });
});

describe("an answer that makes calls", () => {
  it("is recorded with its calls' scrollback lines: a worker that dies right after leaves both", async () => {
    const { db } = database();
    const { id, epoch } = await claimedRoot("dies-after-answer", "w1");
    await appendEvent(db, id, "user", "run two commands");
    fake.script({
      agent: "dies-after-answer",
      reply: {
        toolCalls: [
          { name: "bash", arguments: { command: "true" } },
          { name: "bash", arguments: { command: "false" } },
        ],
      },
    });
    const run = runAgent(
      fakeTurnDeps(deadAfter(db, "warren_record_answer"), bus(), fake.baseURL, {
        owner: "w1",
        epoch,
      }),
      id,
      new AbortController().signal,
    );
    await expect(run).rejects.toThrow("the worker died");
    fake.assertAllUsed();
    const events = await db.execute<{ id: string; kind: string; key: string; content: string }>(
      sql`select id, kind, key, content from events
           where agent_id = ${id} and kind in ('assistant', 'tool_call') order by id`,
    );
    const [answer, ...lines] = events.rows;
    expect(answer!.kind).toBe("assistant");
    expect(lines.map((l) => l.content)).toEqual([
      'bash({"command":"true"})',
      'bash({"command":"false"})',
    ]);
    expect(lines.every((l) => l.key.startsWith(`c:${answer!.id}:`))).toBe(true);
  });
});

describe("keys: a write retried after its reply was lost records nothing twice", () => {
  it("one tool result per call, counted once", async () => {
    const { db } = database();
    const { id, epoch } = await claimedRoot("keyed", "w1");
    const key = eventKey.toolResult(1, "call_a");
    await appendToolResult(db, id, "{}", { tool_call_id: "call_a" }, { key, epoch });
    const again = db.transaction((tx) =>
      appendToolResult(tx, id, "{}", { tool_call_id: "call_a" }, { key, epoch }),
    );
    await expect(again).rejects.toSatisfy(isDuplicateKey);
    expect(await count(sql`select tool_calls as n from agents where id = ${id}`)).toBe(1);
  });

  it("an answer keyed by its request is recorded once; the retry gets the first", async () => {
    const { db } = database();
    const { id } = await claimedRoot("answer", "w1");
    const key = eventKey.assistant(42);
    const first = await appendEventOnce(db, id, "assistant", "one", {}, { key });
    const second = await appendEventOnce(db, id, "assistant", "two", {}, { key });
    expect(first.fresh).toBe(true);
    expect(second).toEqual({ row: first.row, fresh: false });
  });

  it("a retried wait returns the mail its first attempt took and takes no other", async () => {
    const { db } = database();
    const { id } = await claimedRoot("waiter", "w1");
    const child = await forkAgent(db, id, { name: "kid" });
    await db.execute(sql`
      insert into mail (tree_id, from_id, to_id, body)
      values (${id}, ${child.id}, ${id}, 'first'), (${id}, ${child.id}, ${id}, 'second')`);
    const request = (replay: boolean) =>
      waitForMail(db, bus(), {
        agentId: id,
        timeoutSeconds: 0,
        record: {
          kind: "tool_result",
          data: { tool_call_id: "w" },
          key: eventKey.toolResult(7, "w"),
        },
        replay,
      });
    const first = await request(false);
    // The retry that knows it is one (withRetry's second attempt) and one that does not.
    const replayed = await request(true);
    const blind = await request(false);
    expect(first.result).toMatchObject({ message: "first" });
    expect(replayed).toEqual(first);
    expect(blind).toEqual(first);
    expect(
      await count(
        sql`select count(*)::int as n from mail where to_id = ${id} and consumed_at is null`,
      ),
    ).toBe(1);
  });

  it("a retried fan-in returns what it took; the later mail stays for the next wait", async () => {
    const { db } = database();
    const { id } = await claimedRoot("fan", "w1");
    const kid = await forkAgent(db, id, { name: "kid" });
    await db.execute(sql`update agents set state = 'idle' where id = ${kid.id}`);
    await db.execute(sql`
      insert into mail (tree_id, from_id, to_id, body) values (${id}, ${kid.id}, ${id}, 'one')`);
    const request = () =>
      waitForMail(db, bus(), {
        agentId: id,
        timeoutSeconds: 0,
        fromAgents: [kid.id],
        record: { kind: "tool_result", data: {}, key: eventKey.toolResult(8, "f") },
      });
    const first = await request();
    await db.execute(sql`
      insert into mail (tree_id, from_id, to_id, body) values (${id}, ${kid.id}, ${id}, 'two')`);
    const again = await request();
    expect(again).toEqual(first);
    const left = await db.execute<{ body: string }>(
      sql`select body from mail where to_id = ${id} and consumed_at is null`,
    );
    expect(left.rows.map((r) => r.body)).toEqual(["two"]);
  });
});

describe("a turn whose every commit reply is lost once", () => {
  it("records each answer, result and mail once and counts tokens once", async () => {
    const { db } = database();
    const { id, epoch } = await claimedRoot("lossy", "w1");
    const child = await forkAgent(db, id, { name: "kid" });
    await db.execute(sql`update agents set state = 'idle' where id = ${child.id}`);
    await db.execute(sql`
      insert into mail (tree_id, from_id, to_id, body) values (${id}, ${child.id}, ${id}, 'm1'),
                                                     (${id}, ${child.id}, ${id}, 'm2')`);
    await appendEvent(db, id, "user", "take your mail");
    fake.script([
      {
        agent: "lossy",
        reply: {
          toolCalls: [{ name: "wait", arguments: { timeout: 0 } }],
          usage: { input: 10, output: 5 },
        },
      },
      { agent: "lossy", reply: { text: "done", usage: { input: 20, output: 2 } } },
      { agent: "lossy", reply: { text: "and m2", usage: { input: 1, output: 1 } } },
    ]);
    await runAgent(
      fakeTurnDeps(loseRepliesOnce(db), bus(), fake.baseURL, { owner: "w1", epoch }),
      id,
      new AbortController().signal,
    );
    fake.assertAllUsed();
    const events = await db.execute<{ kind: string; content: string }>(
      sql`select kind, content from events where agent_id = ${id} order by id`,
    );
    const kinds = events.rows.map((e) => e.kind);
    expect(kinds.filter((k) => k === "assistant")).toHaveLength(3);
    expect(kinds.filter((k) => k === "tool_result")).toHaveLength(1);
    expect(kinds.filter((k) => k === "tool_call")).toHaveLength(1);
    expect(events.rows.find((e) => e.kind === "tool_result")!.content).toContain("m1");
    const [row] = (
      await db.execute<{ input_tokens: string; output_tokens: string; tool_calls: number }>(
        sql`select input_tokens, output_tokens, tool_calls from agents where id = ${id}`,
      )
    ).rows;
    expect(Number(row!.input_tokens)).toBe(31);
    expect(Number(row!.output_tokens)).toBe(8);
    expect(row!.tool_calls).toBe(1);
    const unread = await db.execute<{ body: string }>(
      sql`select body from mail where to_id = ${id} and consumed_at is null`,
    );
    // m2 arrived before the turn ended: the turn end took it in (a mail_in), not left unread.
    expect(unread.rows).toEqual([]);
    expect(kinds.filter((k) => k === "mail_in")).toHaveLength(1);
  });
});

/**
 * The database handle as seen through a network that loses every other commit's reply: each
 * transaction, and each prepared statement (the consuming wait), commits, then every other one
 * answers its caller with a connection error instead (and a retry follows).
 */
function loseRepliesOnce(db: Db): Db {
  let n = 0;
  const lose = <T>(result: T): T => {
    if (n++ % 2 === 0) {
      throw Object.assign(new Error("Connection terminated unexpectedly"), { code: "ECONNRESET" });
    }
    return result;
  };
  const client = new Proxy(db.$client, {
    get(target, prop, receiver) {
      if (prop !== "query") return Reflect.get(target, prop, receiver) as unknown;
      return async (config: unknown, values?: unknown) => {
        const result: unknown = await target.query(config as string, values as unknown[]);
        return typeof config === "object" && config && "name" in config ? lose(result) : result;
      };
    },
  });
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === "$client") return client;
      if (prop !== "transaction") return Reflect.get(target, prop, receiver) as unknown;
      return async (...args: Parameters<Db["transaction"]>) =>
        lose(await target.transaction(...args));
    },
  });
}

/**
 * The database handle of a worker that dies once statement `name` has committed: every prepared
 * statement after it fails (not as a connection error, which would be retried).
 */
function deadAfter(db: Db, name: string): Db {
  let dead = false;
  const session = (db as unknown as { session: { client: Db["$client"] } }).session;
  const client = new Proxy(session.client, {
    get(target, prop, receiver) {
      if (prop !== "query") return Reflect.get(target, prop, receiver) as unknown;
      return async (config: unknown, values?: unknown) => {
        const named = typeof config === "object" && config && "name" in config;
        if (named && dead) throw new Error("the worker died");
        const result: unknown = await target.query(config as string, values as unknown[]);
        if (named && (config as { name: string }).name === name) dead = true;
        return result;
      };
    },
  });
  const dying = new Proxy(session, {
    get: (target, prop, receiver) =>
      prop === "client" ? client : (Reflect.get(target, prop, receiver) as unknown),
  });
  return new Proxy(db, {
    get: (target, prop, receiver) =>
      prop === "session" ? dying : (Reflect.get(target, prop, receiver) as unknown),
  });
}
