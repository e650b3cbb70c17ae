// End to end through `bin/warren -p`: mail is delivered FIFO to `wait`, and mail to an idle agent
// wakes it, in a ping-pong that the turns budget bounds.
import { describe, expect, it } from "vitest";
import type { RecordedRequest } from "../support/fake-model.js";
import {
  agentNamed,
  eventsOf,
  lastToolResults,
  lastUserStartsWith,
  mailOf,
  requestsOf,
  useE2E,
  after,
  isFirst,
} from "./e2e-support.js";

const e2e = useE2E();
const WORDS = ["one", "two", "three"];

describe("mail", () => {
  it("delivers several mails from one child to plain waits in FIFO order", async () => {
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "writer", prompt: "write", context: "fresh" } },
          ],
        },
      },
      // Dawdle a little first, so that usually all three mails are queued before the first wait.
      { agent: "root", match: after("fork"), reply: { delayMs: 500, toolCalls: [wait(30)] } },
      { agent: "root", match: after("wait"), times: 2, reply: { toolCalls: [wait(30)] } },
      { agent: "root", match: after("wait"), reply: { text: "read three" } },
      // The writer sends one mail per response, so their order is the order of sending.
      ...WORDS.map((word, i) => ({
        agent: "writer",
        match: (req: RecordedRequest) => countToolResults(req) === i,
        reply: { toolCalls: [{ name: "send", arguments: { to: "parent", message: word } }] },
      })),
      {
        agent: "writer",
        match: (req: RecordedRequest) => countToolResults(req) === 3,
        reply: { text: "wrote three" },
      },
    ]);

    const run = await e2e.prompt("read the writer's mail", { timeout: 30 });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.json?.text).toBe("read three");

    const db = e2e.db();
    const treeId = run.json!.tree_id;
    const writer = await agentNamed(db, treeId, "writer");
    const received = requestsOf(fake, "root")
      .slice(2)
      .map((req) => lastToolResults(req)[0]!.value);
    expect(received).toEqual(
      WORDS.map((message) => ({ from: writer.id, from_name: "writer", message })),
    );

    // Each mail is consumed by the wait result that delivered it, in id order.
    const letters = await mailOf(db, treeId);
    expect(letters.map((m) => [m.from_id, m.body])).toEqual(WORDS.map((w) => [writer.id, w]));
    const waits = (await eventsOf(db, treeId)).filter(
      (e) => e.kind === "tool_result" && e.data?.name === "wait",
    );
    expect(letters.map((m) => m.consumed_by_event)).toEqual(waits.map((e) => e.id));
  });

  it("wakes an idle child with mail, and the turns budget bounds the ping-pong", async () => {
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            {
              name: "fork",
              arguments: { name: "A", prompt: "ping", context: "fresh", budget: { turns: 2 } },
            },
          ],
        },
      },
      // The root ends its turn and goes idle; A's mail wakes it.
      { agent: "root", match: after("fork"), reply: { text: "A is on it" } },
      {
        agent: "root",
        match: lastUserStartsWith('<mail from="A"'),
        times: 2,
        reply: { toolCalls: [{ name: "send", arguments: { to: "A", message: "more work" } }] },
      },
      { agent: "root", match: after("send"), times: 2, reply: { text: "asked A for more" } },
      {
        agent: "A",
        match: isFirst,
        times: 2,
        reply: { toolCalls: [{ name: "send", arguments: { to: "parent", message: "pong" } }] },
      },
      { agent: "A", match: after("send"), times: 2, reply: { text: "sent pong" } },
    ]);

    const run = await e2e.prompt("play ping-pong with A", { timeout: 30 });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.json?.text).toBe("asked A for more");

    const db = e2e.db();
    const treeId = run.json!.tree_id;
    const a = await agentNamed(db, treeId, "A");

    // A's second turn began with the root's mail as a user message.
    const aRequests = requestsOf(fake, "A");
    expect(aRequests).toHaveLength(4);
    expect(aRequests[2]!.lastMessage).toEqual({
      role: "user",
      content: `<mail from="root" id="${treeId.slice(0, 8)}">\nmore work\n</mail>`,
    });
    const rootRequests = requestsOf(fake, "root");
    expect(rootRequests).toHaveLength(6);
    expect(rootRequests[2]!.lastMessage).toEqual({
      role: "user",
      content: `<mail from="A" id="${a.id.slice(0, 8)}">\npong\n</mail>`,
    });

    // The third wake ran into the budget: one clear error, then idle, with no model call.
    expect(a.state).toBe("idle");
    expect(a.turns).toBe(2);
    const aEvents = await eventsOf(db, a.id);
    expect(aEvents.filter((e) => e.kind === "mail_in")).toHaveLength(2);
    expect(aEvents.at(-2)).toMatchObject({ kind: "mail_in" });
    expect(aEvents.at(-1)).toMatchObject({ kind: "error" });
    expect(aEvents.at(-1)!.content).toMatch(/turn budget exhausted \(2 of 2 turns\)/);

    const rootEvents = await eventsOf(db, treeId);
    expect(rootEvents.filter((e) => e.kind === "mail_in").map((e) => e.content)).toEqual([
      `<mail from="A" id="${a.id.slice(0, 8)}">\npong\n</mail>`,
      `<mail from="A" id="${a.id.slice(0, 8)}">\npong\n</mail>`,
    ]);
    // Every mail was taken in by exactly one event.
    const letters = await mailOf(db, treeId);
    expect(letters).toHaveLength(4);
    expect(letters.every((m) => m.consumed_at !== null && m.consumed_by_event !== null)).toBe(true);
  });
});

function wait(timeout: number) {
  return { name: "wait", arguments: { timeout } };
}

function countToolResults(req: RecordedRequest): number {
  return req.messages.filter((m) => m.role === "tool").length;
}
