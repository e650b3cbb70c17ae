// Person input (sendInput): an idle agent is woken by it; input to a busy agent is queued — saved,
// shown as pending, never taken by `wait` — and becomes a `user` event when the turn ends.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createTree, forkAgent, killAgent } from "../../src/agents/tree.js";
import { pendingInputs, sendInput, validateInput } from "../../src/mail/input.js";
import { interruptAgent } from "../../src/runtime/interrupt.js";
import { expectAgentError } from "../support/agents.js";
import { isAgent, isEvent, openObserver, useRuntime } from "./rig.js";

const rig = useRuntime();

async function kinds(agentId: string): Promise<string[]> {
  const rows = await rig
    .database()
    .db.execute<{ kind: string }>(
      sql`select kind from events where agent_id = ${agentId} order by id`,
    );
  return rows.rows.map((r) => r.kind);
}

describe("sendInput", () => {
  it("queues input to a busy agent, keeps it from wait, and delivers it when the turn ends", async () => {
    const { db, url } = rig.database();
    const fake = rig.fake();
    fake.script([
      {
        agent: "busy",
        match: (req) => req.lastMessage?.content === "start",
        reply: { toolCalls: [{ name: "wait", arguments: { timeout: 2 } }] },
      },
      {
        agent: "busy",
        match: (req) => req.lastMessage?.role === "tool",
        reply: { text: "waited" },
      },
      {
        agent: "busy",
        match: (req) => req.lastMessage?.content === "and this, please",
        reply: { text: "got your input" },
      },
    ]);
    const agent = await createTree(db, { name: "busy" });
    const observer = await openObserver(url, agent.id);
    try {
      expect((await sendInput(observer.db, agent.id, "start")).woke).toBe(true);
      await observer.until(
        "the agent waiting",
        isAgent(agent.id, (a) => a.state === "waiting"),
      );
      const queued = await sendInput(observer.db, agent.id, "and this, please");
      expect(queued.woke).toBe(false);
      await observer.until("an input update", (u) => u.type === "input" && u.agentId === agent.id);
      expect((await pendingInputs(observer.db, agent.id)).map((p) => p.body)).toEqual([
        "and this, please",
      ]);

      // The wait ignores the queued input: it times out with nothing.
      const result = await observer.until("the wait result", isEvent(agent.id, "tool_result"));
      expect(JSON.parse(result.event.content)).toEqual({ status: "timeout" });
      await observer.until(
        "the input delivered",
        isEvent(agent.id, "user", (c) => c === "and this, please"),
      );
      await observer.until(
        "the answer to it",
        isEvent(agent.id, "assistant", (c) => c === "got your input"),
      );
      await observer.until(
        "the agent idle",
        isAgent(agent.id, (a) => a.state === "idle"),
      );
      expect(await pendingInputs(observer.db, agent.id)).toEqual([]);
      expect(await kinds(agent.id)).toEqual([
        "user",
        "assistant",
        "tool_call",
        "tool_result",
        "assistant",
        "user",
        "assistant",
      ]);
      const mail = await db.execute<{ kind: string; consumed_by_event: string | null }>(
        sql`select kind, consumed_by_event from mail where to_id = ${agent.id} order by id`,
      );
      expect(mail.rows.map((m) => m.kind)).toEqual(["input", "input"]);
      expect(mail.rows.every((m) => m.consumed_by_event !== null)).toBe(true);
      fake.assertAllUsed();
    } finally {
      await observer.close();
    }
  });

  it("after Escape, the next input starts a turn that the model sees it in", async () => {
    const { db } = rig.database();
    const fake = rig.fake();
    fake.script([
      {
        agent: "hung",
        match: (req) => req.lastMessage?.content === "first",
        reply: { hang: true },
      },
      {
        agent: "hung",
        match: (req) => req.lastMessage?.content === "second",
        reply: { text: "answering the second" },
      },
    ]);
    const agent = await createTree(db, { name: "hung" });
    await sendInput(db, agent.id, "first");
    await waitFor(async () => fake.requests.some((r) => r.lastMessage?.content === "first"));
    expect(await interruptAgent(db, agent.id)).toBe(true);
    await waitFor(async () => (await kinds(agent.id)).includes("interrupted"));
    await waitFor(async () => (await stateOf(agent.id)) === "idle");
    expect((await sendInput(db, agent.id, "second")).woke).toBe(true);
    await waitFor(async () => (await kinds(agent.id)).at(-1) === "assistant");
    expect(await kinds(agent.id)).toEqual(["user", "interrupted", "user", "assistant"]);
    fake.assertAllUsed();
  });

  it("refuses empty, NUL and malformed text, dead and unknown agents, with clear codes", async () => {
    const { db } = rig.database();
    const root = await createTree(db, { name: "refuser" });
    const child = await forkAgent(db, root.id, { name: "gone" });
    await killAgent(db, { targetId: child.id, byAgentId: null });
    await expectAgentError(sendInput(db, root.id, "   "), "INVALID_ARGS");
    await expectAgentError(sendInput(db, root.id, "a\u0000b"), "INVALID_ARGS");
    await expectAgentError(sendInput(db, root.id, "broken \ud800 surrogate"), "INVALID_ARGS");
    await expectAgentError(sendInput(db, root.id, "x".repeat(70_000)), "LIMIT_EXCEEDED");
    // The config's limits.maxMessageBytes (the TUI passes it) replaces the default 64 KiB.
    await expectAgentError(sendInput(db, root.id, "x".repeat(11), 10), "LIMIT_EXCEEDED");
    expect(validateInput("x".repeat(10), 10)).toBe("x".repeat(10));
    const dead = await expectAgentError(sendInput(db, child.id, "hello?"), "AGENT_DEAD");
    expect(dead.message).toMatch(/dead/);
    await expectAgentError(
      sendInput(db, "00000000-0000-4000-8000-000000000000", "hi"),
      "UNKNOWN_AGENT",
    );
    await expectAgentError(sendInput(db, "not-an-id", "hi"), "UNKNOWN_AGENT");
    const stored = await db.execute(
      sql`select 1 from mail where kind = 'input' and to_id = any(${sql.param([root.id, child.id])}::uuid[])`,
    );
    expect(stored.rows).toHaveLength(0);
  });
});

async function stateOf(agentId: string): Promise<string | undefined> {
  const rows = await rig
    .database()
    .db.execute<{ state: string }>(sql`select state from agents where id = ${agentId}`);
  return rows.rows[0]?.state;
}

async function waitFor(probe: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("timed out");
}
