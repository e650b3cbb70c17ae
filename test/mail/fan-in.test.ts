// waitForMail with from_agents (fan-in): one entry per listed agent, status precedence, early
// return, partial results on timeout and wake-ups from mail and state changes.
import { eq, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { AgentRow } from "../../src/agents/agents.sql.js";
import { agents } from "../../src/agents/agents.sql.js";
import { events } from "../../src/agents/events.sql.js";
import { appendEvent } from "../../src/agents/events.js";
import { isLeaseLost } from "../../src/agents/errors.js";
import { createTree, forkAgent, killAgent, setState } from "../../src/agents/tree.js";
import type { Db } from "../../src/db/client.js";
import { mail } from "../../src/mail/mail.sql.js";
import { sendMail } from "../../src/mail/send.js";
import {
  waitForMail,
  type FanInEntry,
  type FanInStatus,
  type WaitRequest,
} from "../../src/mail/wait.js";
import { expectAgentError, sleep, useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
let db: Db;

beforeAll(() => {
  db = database().db;
});

/** A parent with `names.length` running children. */
async function family(...names: string[]) {
  const parent = await createTree(db, { name: "boss" });
  const children: AgentRow[] = [];
  for (const name of names) children.push(await forkAgent(db, parent.id, { name, prompt: "go" }));
  const send = (from: AgentRow, body: string) =>
    sendMail(db, { treeId: parent.id, fromId: from.id, toId: parent.id, body });
  const fanIn = async (from: AgentRow[], options: Partial<WaitRequest> = {}) => {
    const outcome = await waitForMail(db, bus(), {
      agentId: parent.id,
      timeoutSeconds: 0,
      fromAgents: from.map((a) => a.id),
      ...options,
    });
    if (!("results" in outcome.result)) throw new Error("expected a fan-in result");
    return { ...outcome, results: outcome.result.results };
  };
  return { parent, children, send, fanIn };
}

const statuses = (results: FanInEntry[]) => results.map((r) => r.status);

/** Resolves once the bus LISTENs and the waiter has had time to make its first check. */
async function blocked(): Promise<void> {
  await vi.waitFor(() => expect(bus().channelCount()).toBeGreaterThan(0));
  await sleep(300);
}

describe("fan-in", () => {
  it("returns one entry per listed agent, in the listed order", async () => {
    const { children, send, fanIn } = await family("a", "b", "c");
    const [a, b, c] = children as [AgentRow, AgentRow, AgentRow];
    await send(b, "from b");
    await setState(db, a.id, "idle");
    await killAgent(db, { targetId: c.id, byAgentId: null });
    const { results } = await fanIn([c, b, a]);
    expect(results).toEqual([
      { agent_id: c.id, name: "c", status: "dead" },
      { agent_id: b.id, name: "b", status: "received", message: "from b" },
      { agent_id: a.id, name: "a", status: "idle" },
    ]);
  });

  it("mail beats every state: received before dead, idle or running", async () => {
    const { children, send, fanIn } = await family("dead", "idle", "running");
    const [dead, idle, running] = children as [AgentRow, AgentRow, AgentRow];
    for (const agent of children) await send(agent, `last words of ${agent.name}`);
    await killAgent(db, { targetId: dead.id, byAgentId: null });
    await setState(db, idle.id, "idle");
    const first = await fanIn(children);
    expect(statuses(first.results)).toEqual(["received", "received", "received"]);
    expect(first.results[0]?.message).toBe("last words of dead");
    // With the mail taken, each agent's state shows through: dead > idle > running.
    const second = await fanIn([dead, idle, running]);
    expect(statuses(second.results)).toEqual(["dead", "idle", "running"]);
  });

  it("takes one message per agent per wait, oldest first", async () => {
    const { children, send, fanIn } = await family("talker", "quiet");
    const [talker, quiet] = children as [AgentRow, AgentRow];
    await send(talker, "first");
    await send(talker, "second");
    await setState(db, quiet.id, "idle");
    const one = await fanIn([talker, quiet], { timeoutSeconds: 10 });
    const two = await fanIn([talker, quiet], { timeoutSeconds: 10 });
    const three = await fanIn([talker, quiet]);
    expect(one.results.map((r) => r.message)).toEqual(["first", undefined]);
    expect(two.results.map((r) => r.message)).toEqual(["second", undefined]);
    expect(statuses(three.results)).toEqual(["running", "idle"]);
    expect(one.consumedMailIds).toHaveLength(1);
  });

  it("returns as soon as every agent has answered, gone idle or died", async () => {
    const { children, send, fanIn } = await family("x", "y", "z");
    const [x, y, z] = children as [AgentRow, AgentRow, AgentRow];
    const started = Date.now();
    const waiting = fanIn(children, { timeoutSeconds: 30, recheckMs: 60_000 });
    await blocked();
    await send(x, "x done");
    await setState(db, y.id, "idle");
    await killAgent(db, { targetId: z.id, byAgentId: null });
    const { results } = await waiting;
    expect(statuses(results)).toEqual(["received", "idle", "dead"]);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(bus().channelCount()).toBe(0);
  });

  it("one sends, one is idle, one is dead and one keeps running past the timeout", async () => {
    const { parent, children, send, fanIn } = await family("sender", "idler", "dead", "busy");
    const [sender, idler, dead, busy] = children as [AgentRow, AgentRow, AgentRow, AgentRow];
    await setState(db, idler.id, "idle");
    await killAgent(db, { targetId: dead.id, byAgentId: null });
    const progress: FanInStatus[][] = [];
    const waiting = fanIn(children, {
      timeoutSeconds: 2,
      onProgress: (entries) => progress.push(statuses(entries)),
    });
    await blocked();
    const { mailId } = await send(sender, "report");
    const outcome = await waiting;

    expect(outcome.results).toEqual([
      { agent_id: sender.id, name: "sender", status: "received", message: "report" },
      { agent_id: idler.id, name: "idler", status: "idle" },
      { agent_id: dead.id, name: "dead", status: "dead" },
      { agent_id: busy.id, name: "busy", status: "running" },
    ]);
    expect(progress[0]).toEqual(["running", "idle", "dead", "running"]);
    // The partial result still consumes what it received, recorded by the result's event.
    expect(outcome.consumedMailIds).toEqual([mailId]);
    const [row] = await db.select().from(mail).where(eq(mail.id, mailId));
    expect(row?.consumed_by_event).toBe(outcome.eventId);
    const [event] = await db.select().from(events).where(eq(events.id, outcome.eventId));
    expect(event?.agent_id).toBe(parent.id);
    expect(JSON.parse(event!.content)).toEqual(outcome.result);
  });

  it("a look stores the per-agent state as the waiter's wait_status while some still run", async () => {
    const { parent, children, send, fanIn } = await family("quick", "slow");
    const [quick, slow] = children as [AgentRow, AgentRow];
    const waitStatus = async () =>
      (await db.select().from(agents).where(eq(agents.id, parent.id)))[0]!.wait_status;
    const stored: boolean[] = [];
    const waiting = fanIn(children, {
      timeoutSeconds: 30,
      recheckMs: 60_000,
      storeStatus: true,
      onProgress: (_, wrote) => stored.push(wrote),
    });
    await blocked();
    expect(await waitStatus()).toEqual([
      { agent_id: quick.id, name: "quick", status: "running" },
      { agent_id: slow.id, name: "slow", status: "running" },
    ]);
    await send(quick, "done");
    await vi.waitFor(async () =>
      expect((await waitStatus())?.map((e) => e.status)).toEqual(["received", "running"]),
    );
    await setState(db, slow.id, "idle");
    await waiting;
    expect(stored.length).toBeGreaterThanOrEqual(2);
    // The last report is the settled one, from the transaction that took the mail: not stored.
    expect(stored.slice(0, -1).every(Boolean)).toBe(true);
    expect(stored.at(-1)).toBe(false);
  });

  it("a child whose turn failed is failed with why, in the stored status and the result", async () => {
    const { parent, children, fanIn } = await family("broken", "slow");
    const [broken, slow] = children as [AgentRow, AgentRow];
    // The end of a failed turn: an error event marked failed (turn.ts), then idle.
    await appendEvent(db, broken.id, "error", "model error: 404 no such model", { failed: true });
    await setState(db, broken.id, "idle");
    const waitStatus = async () =>
      (await db.select().from(agents).where(eq(agents.id, parent.id)))[0]!.wait_status;
    const waiting = fanIn(children, { timeoutSeconds: 30, recheckMs: 60_000, storeStatus: true });
    await blocked();
    // The status layer's source: failed, never idle, while the other still runs.
    expect((await waitStatus())?.map((e) => e.status)).toEqual(["failed", "running"]);
    await setState(db, slow.id, "idle");
    const { results } = await waiting;
    expect(results).toEqual([
      {
        agent_id: broken.id,
        name: "broken",
        status: "failed",
        error: "model error: 404 no such model",
      },
      { agent_id: slow.id, name: "slow", status: "idle" },
    ]);
  });

  it("an unknown agent is UNKNOWN_AGENT at once, before subscribing", async () => {
    const { children, fanIn } = await family("known");
    const unknown = { id: "00000000-0000-4000-8000-000000000000" } as AgentRow;
    await expectAgentError(fanIn([...children, unknown], { timeoutSeconds: 30 }), "UNKNOWN_AGENT");
    expect(bus().channelCount()).toBe(0);
  });

  it("a wait blocked on a running child returns when the child goes idle", async () => {
    const { children, fanIn } = await family("worker");
    const [worker] = children as [AgentRow];
    const started = Date.now();
    const waiting = fanIn([worker], { timeoutSeconds: 30, recheckMs: 60_000 });
    await blocked();
    // The wait LISTENs on its own channel only, where the child's change is told (CHILD_HINT).
    expect(bus().channelCount()).toBe(1);
    await setState(db, worker.id, "idle");
    expect(statuses((await waiting).results)).toEqual(["idle"]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a waiter whose lease is gone takes nothing, whether its children still run or not", async () => {
    const { parent, children, send, fanIn } = await family("a", "b");
    const [a, b] = children as [AgentRow, AgentRow];
    await db
      .update(agents)
      .set({ lease_owner: "worker-2", lease_epoch: 7 })
      .where(eq(agents.id, parent.id));
    const stale = { owner: "worker-1", epoch: 6 };
    await send(a, "from a");
    // b runs: the quick look without a transaction refuses it at once, not at the timeout.
    const running = fanIn([a, b], { timeoutSeconds: 60, fence: stale });
    running.catch(() => {});
    const first = await Promise.race([
      running.then(
        () => "took",
        (e: unknown) => e,
      ),
      sleep(3000),
    ]);
    expect(isLeaseLost(first)).toBe(true);
    // Both settled: the locked transaction refuses it.
    await send(b, "from b");
    await expect(fanIn([a, b], { timeoutSeconds: 5, fence: stale })).rejects.toSatisfy(isLeaseLost);
    const left = await db.select().from(mail).where(eq(mail.to_id, parent.id));
    expect(left.map((m) => m.consumed_at)).toEqual([null, null]);
    // The lease's holder takes both.
    const { results } = await fanIn([a, b], { fence: { owner: "worker-2", epoch: 7 } });
    expect(statuses(results)).toEqual(["received", "received"]);
  });

  it("leaves mail from agents that are not listed", async () => {
    const { children, send, fanIn } = await family("listed", "other");
    const [listed, other] = children as [AgentRow, AgentRow];
    await send(other, "not for this wait");
    await send(listed, "for this wait");
    const { results } = await fanIn([listed]);
    expect(results[0]?.message).toBe("for this wait");
    const unconsumed = await db
      .select()
      .from(mail)
      .where(inArray(mail.from_id, [other.id]));
    expect(unconsumed.map((m) => m.consumed_at)).toEqual([null]);
  });
});
