// The person's /wait (requestWait): the idle agent runs its own `wait` through the scheduler — the
// fan-in shows in wait_status, the result is recorded, Escape stops it — and no model call follows.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createTree, forkAgent, killAgent } from "../../src/agents/tree.js";
import { agentNameOf } from "../support/fake-model.js";
import { sendInput } from "../../src/mail/input.js";
import { interruptAgent } from "../../src/runtime/interrupt.js";
import { requestWait } from "../../src/runtime/person-wait.js";
import { expectAgentError } from "../support/agents.js";
import { isAgent, isEvent, openObserver, until, useRuntime } from "./rig.js";

const rig = useRuntime();

async function kinds(agentId: string): Promise<string[]> {
  const rows = await rig
    .database()
    .db.execute<{ kind: string }>(
      sql`select kind from events where agent_id = ${agentId} order by id`,
    );
  return rows.rows.map((r) => r.kind);
}

const requestsBy = (name: string) => rig.fake().requests.filter((r) => agentNameOf(r) === name);

describe("requestWait", () => {
  it("runs the agent's own fan-in: status layer live, result recorded, no model call", async () => {
    const { db, url } = rig.database();
    const fake = rig.fake();
    fake.script([
      {
        agent: "w1",
        match: (req) => req.lastMessage?.role === "user",
        reply: { toolCalls: [{ name: "send", arguments: { to: "parent", message: "one" } }] },
      },
      { agent: "w1", match: (req) => req.lastMessage?.role === "tool", reply: { text: "ok" } },
      {
        agent: "w2",
        match: (req) => req.lastMessage?.role === "user",
        reply: {
          delayMs: 1200,
          toolCalls: [{ name: "send", arguments: { to: "parent", message: "two" } }],
        },
      },
      { agent: "w2", match: (req) => req.lastMessage?.role === "tool", reply: { text: "ok" } },
    ]);
    const root = await createTree(db, { name: "person-root" });
    const observer = await openObserver(url, root.id);
    try {
      const w1 = await forkAgent(db, root.id, { name: "w1", prompt: "go", context: "fresh" });
      const w2 = await forkAgent(db, root.id, { name: "w2", prompt: "go", context: "fresh" });
      const receipt = await requestWait(observer.db, root.id, {
        timeoutSeconds: 30,
        fromAgents: [w1.id, w2.id],
      });
      expect(receipt.call).toMatchObject({ name: "wait", id: `person_wait_${receipt.eventId}` });

      await observer.until(
        "w1 received while w2 runs",
        isAgent(root.id, (a) => {
          const s = Object.fromEntries((a.wait_status ?? []).map((e) => [e.name, e.status]));
          return a.state === "waiting" && s.w1 === "received" && s.w2 === "running";
        }),
      );
      const result = await observer.until("the fan-in result", isEvent(root.id, "tool_result"));
      expect(JSON.parse(result.event.content)).toEqual({
        results: [
          { agent_id: w1.id, name: "w1", status: "received", message: "one" },
          { agent_id: w2.id, name: "w2", status: "received", message: "two" },
        ],
      });
      expect(result.event.data).toMatchObject({ tool_call_id: receipt.call.id, name: "wait" });
      await observer.until(
        "the root idle again",
        isAgent(root.id, (a) => a.state === "idle" && a.wait_status === null),
      );
      expect(await kinds(root.id)).toEqual([
        "fork",
        "fork",
        "assistant",
        "tool_call",
        "tool_result",
      ]);
      expect(requestsBy("person-root")).toHaveLength(0);
      const consumed = await db.execute<{ n: number }>(
        sql`select count(*)::int as n from mail where to_id = ${root.id} and consumed_by_event = ${result.event.id}`,
      );
      expect(consumed.rows[0]!.n).toBe(2);
      await until("the workers idle", async () => {
        const rows = await db.execute<{ n: number }>(
          sql`select count(*)::int as n from agents where parent_id = ${root.id} and state = 'idle'`,
        );
        return rows.rows[0]!.n === 2 ? true : undefined;
      });
      fake.assertAllUsed();
    } finally {
      await observer.close();
    }
  });

  it("is interrupted by Escape like the agent's own wait, and later input starts a turn", async () => {
    const { db } = rig.database();
    const fake = rig.fake();
    fake.script({
      agent: "patient",
      match: (req) => req.lastMessage?.content === "now talk",
      reply: { text: "talking" },
    });
    const root = await createTree(db, { name: "patient" });
    await requestWait(db, root.id, { timeoutSeconds: 600 });
    await until("the wait to block", async () =>
      (await stateOf(root.id)) === "waiting" ? true : undefined,
    );
    expect(await interruptAgent(db, root.id)).toBe(true);
    await until("idle", async () => ((await stateOf(root.id)) === "idle" ? true : undefined));
    expect(await kinds(root.id)).toEqual(["assistant", "tool_call", "tool_result", "interrupted"]);
    await sendInput(db, root.id, "now talk");
    await until("the answer", async () =>
      (await kinds(root.id)).at(-1) === "assistant" ? true : undefined,
    );
    // The model sees the person's wait as an answered call, then the new message.
    const last = requestsBy("patient").at(-1)!;
    expect(last.messages.slice(-3).map((m) => m.role)).toEqual(["assistant", "tool", "user"]);
    fake.assertAllUsed();
  });

  it("refuses a busy, dead or unknown agent and bad arguments, with clear codes", async () => {
    const { db } = rig.database();
    const root = await createTree(db, { name: "refusing" });
    const child = await forkAgent(db, root.id, { name: "kid" });
    const other = await createTree(db, { name: "elsewhere" });
    await db.execute(sql`update agents set state = 'running' where id = ${child.id}`);
    const busy = await expectAgentError(
      requestWait(db, child.id, { timeoutSeconds: 5 }),
      "NOT_ALLOWED",
    );
    expect(busy.message).toMatch(/busy/);
    await db.execute(sql`update agents set state = 'idle' where id = ${child.id}`);
    await killAgent(db, { targetId: child.id, byAgentId: null });
    await expectAgentError(requestWait(db, child.id, { timeoutSeconds: 5 }), "AGENT_DEAD");
    await expectAgentError(requestWait(db, root.id, { timeoutSeconds: -1 }), "INVALID_ARGS");
    await expectAgentError(requestWait(db, root.id, { timeoutSeconds: 4000 }), "LIMIT_EXCEEDED");
    await expectAgentError(
      requestWait(db, root.id, { timeoutSeconds: 5, fromAgents: [root.id] }),
      "INVALID_ARGS",
    );
    await expectAgentError(
      requestWait(db, root.id, { timeoutSeconds: 5, fromAgents: [other.id] }),
      "UNKNOWN_AGENT",
    );
    await expectAgentError(
      requestWait(db, "00000000-0000-4000-8000-000000000000", { timeoutSeconds: 5 }),
      "UNKNOWN_AGENT",
    );
    expect(await kinds(root.id)).toEqual(["fork"]);
    expect(await stateOf(root.id)).toBe("idle");
  });
});

async function stateOf(agentId: string): Promise<string | undefined> {
  const rows = await rig
    .database()
    .db.execute<{ state: string }>(sql`select state from agents where id = ${agentId}`);
  return rows.rows[0]?.state;
}
