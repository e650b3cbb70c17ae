// waitForMail without from_agents: FIFO, the non-blocking check, NOTIFY wake-up, consumption
// recorded by an event, and cancellation.
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { events } from "../../src/agents/events.sql.js";
import { listEvents } from "../../src/agents/events.js";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import type { Db } from "../../src/db/client.js";
import { mail } from "../../src/mail/mail.sql.js";
import { sendMail } from "../../src/mail/send.js";
import { waitForMail, type WaitRequest } from "../../src/mail/wait.js";
import { sleep, useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { PERSON } from "../../src/llm/framing.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
let db: Db;

beforeAll(() => {
  db = database().db;
});

/** A parent (the waiter) with one running child (a sender). */
async function family() {
  const parent = await createTree(db, { name: "boss" });
  const child = await forkAgent(db, parent.id, { name: "child", prompt: "work" });
  const send = (body: string, fromId: string | null = child.id) =>
    sendMail(db, { treeId: parent.id, fromId, toId: parent.id, body });
  const wait = (options: Partial<WaitRequest> = {}) =>
    waitForMail(db, bus(), { agentId: parent.id, timeoutSeconds: 0, ...options });
  return { parent, child, send, wait };
}

/** Resolves once the bus LISTENs on something and the waiter has had time to make its first check. */
async function blocked(): Promise<void> {
  await vi.waitFor(() => expect(bus().channelCount()).toBeGreaterThan(0));
  await sleep(300);
}

describe("waitForMail", () => {
  it("delivers mail oldest first, then reports a timeout", async () => {
    const { child, send, wait } = await family();
    await send("one");
    await send("two", null);
    await send("three");
    const messages = [];
    for (let i = 0; i < 3; i++) messages.push((await wait()).result);
    expect(messages).toEqual([
      { from: child.id, from_name: "child", message: "one" },
      { from: PERSON, from_name: PERSON, message: "two" },
      { from: child.id, from_name: "child", message: "three" },
    ]);
    expect((await wait()).result).toEqual({ status: "timeout" });
  });

  it("timeout 0 checks without blocking or subscribing", async () => {
    const { send, wait } = await family();
    const outcome = await Promise.race([wait(), sleep(2_000).then(() => "blocked" as const)]);
    expect(outcome).not.toBe("blocked");
    expect(outcome !== "blocked" && outcome.result).toEqual({ status: "timeout" });
    expect(outcome !== "blocked" && outcome.consumedMailIds).toEqual([]);
    expect(bus().channelCount()).toBe(0);

    await send("ready");
    expect((await wait()).result).toMatchObject({ message: "ready" });
  });

  it("a blocked wait is woken by a send, long before its timeout and the safety re-check", async () => {
    const { child, send, wait } = await family();
    const started = Date.now();
    const waiting = wait({ timeoutSeconds: 30, recheckMs: 60_000 });
    await blocked();
    await send("wake up");
    const outcome = await waiting;
    expect(outcome.result).toEqual({ from: child.id, from_name: "child", message: "wake up" });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(bus().channelCount()).toBe(0);
  });

  it("consuming marks the mail with the event that recorded the result", async () => {
    const { parent, send, wait } = await family();
    const { mailId } = await send("the answer is 42");
    const outcome = await wait({ record: { kind: "tool_result", data: { call_id: "call_1" } } });
    expect(outcome.consumedMailIds).toEqual([mailId]);

    const [row] = await db.select().from(mail).where(eq(mail.id, mailId));
    expect(row?.consumed_at).toBeInstanceOf(Date);
    expect(row?.consumed_by_event).toBe(outcome.eventId);

    const [event] = await db.select().from(events).where(eq(events.id, outcome.eventId));
    expect(event).toMatchObject({ agent_id: parent.id, kind: "tool_result" });
    expect(JSON.parse(event!.content)).toEqual(outcome.result);
    expect(event?.data).toMatchObject({ call_id: "call_1", mail_ids: [mailId] });

    // A second wait finds nothing: the mail is delivered once.
    expect((await wait()).result).toEqual({ status: "timeout" });
  });

  it("records a mail_in event by default, also for a timeout", async () => {
    const { parent, send, wait } = await family();
    await send("hi", null);
    const received = await wait();
    const timedOut = await wait();
    const recorded = await listEvents(db, parent.id);
    const byId = new Map(recorded.map((e) => [e.id, e]));
    expect(byId.get(received.eventId)?.kind).toBe("mail_in");
    expect(JSON.parse(byId.get(received.eventId)!.content)).toEqual({
      from: PERSON,
      from_name: PERSON,
      message: "hi",
    });
    expect(JSON.parse(byId.get(timedOut.eventId)!.content)).toEqual({ status: "timeout" });
  });

  it("an abort rejects with AbortError and consumes nothing", async () => {
    const { parent, send, wait } = await family();
    const before = (await listEvents(db, parent.id)).length;
    const controller = new AbortController();
    const waiting = wait({ timeoutSeconds: 30, signal: controller.signal });
    await blocked();
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: "AbortError" });
    expect(bus().channelCount()).toBe(0);

    // Mail already there is not taken by an aborted wait either.
    const { mailId } = await send("still here");
    await expect(wait({ signal: controller.signal })).rejects.toMatchObject({ name: "AbortError" });
    const [row] = await db.select().from(mail).where(eq(mail.id, mailId));
    expect(row?.consumed_at).toBeNull();
    expect(await listEvents(db, parent.id)).toHaveLength(before);
  });
});
