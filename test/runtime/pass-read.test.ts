// The turn loop's pass read gives the model's context too (so a step reads nothing more): what it
// reads must build the very context that context.ts's own read builds, with a summary before or
// after the last input, for a root and for a child (whose first message is its task).
import { describe, expect, it } from "vitest";
import { appendEvent } from "../../src/agents/events.js";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { conversation } from "../../src/runtime/context.js";
import { readPass } from "../../src/runtime/pass-read.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();

const call = (id: string) => ({ tool_calls: [{ id, name: "bash", arguments: "{}" }] });

/** A step: an answer with one call, and its result. Returns the result's id. */
async function toolStep(agentId: string, callId: string): Promise<number> {
  const { db } = database();
  await appendEvent(db, agentId, "assistant", "", call(callId));
  await appendEvent(db, agentId, "tool_call", `bash({})`, { tool_call_id: callId });
  const result = await appendEvent(db, agentId, "tool_result", "ok", { tool_call_id: callId });
  return result.id;
}

/** The pass's context and context.ts's own, for the agent as it is now. */
async function bothContexts(agentId: string, first: boolean) {
  const { db } = database();
  const pass = (await readPass(db, agentId, first))!;
  const own = await conversation(db, pass.agent);
  const fromPass = await conversation(db, pass.agent, { read: pass.conversation });
  return { pass, own, fromPass };
}

describe("readPass", () => {
  it("reads the tail and the conversation of a root whose summary ends past its last input", async () => {
    const { db } = database();
    const root = await createTree(db, { name: "long" });
    const input = await appendEvent(db, root.id, "user", "do many things");
    await toolStep(root.id, "c1");
    const through = await toolStep(root.id, "c2");
    await appendEvent(db, root.id, "summary", "you did c1 and c2", { through_event: through });
    await toolStep(root.id, "c3");

    for (const first of [true, false]) {
      const { pass, own, fromPass } = await bothContexts(root.id, first);
      expect(fromPass).toEqual(own);
      expect(fromPass[0]!.message.content).toContain("you did c1 and c2");
      // The tail still starts at the input, though the conversation starts after the summary.
      expect(pass.tail[0]!.id).toBe(input.id);
      expect(pass.tail.map((e) => e.kind)).toContain("summary");
      expect(pass.conversation.own.every((e) => e.id > through)).toBe(true);
    }
  });

  it("reads the tail from mail that came after a summary, and a child's task framed", async () => {
    const { db } = database();
    const root = await createTree(db, { name: "boss" });
    const child = await forkAgent(db, root.id, { name: "kid", prompt: "count the files" });
    const through = await toolStep(child.id, "k1");
    await appendEvent(db, child.id, "summary", "you counted some", { through_event: through });
    await toolStep(child.id, "k2");
    const mail = await appendEvent(db, child.id, "mail_in", "also count the dirs");
    await toolStep(child.id, "k3");

    const { pass, own, fromPass } = await bothContexts(child.id, false);
    expect(fromPass).toEqual(own);
    expect(pass.tail[0]!.id).toBe(mail.id);
    expect(pass.tail.at(-1)!.kind).toBe("tool_result");

    // Without a summary the child's first message is its task, as context.ts frames it.
    const fresh = await forkAgent(db, root.id, { name: "kid2", prompt: "list the dirs" });
    await toolStep(fresh.id, "f1");
    const second = await bothContexts(fresh.id, true);
    expect(second.fromPass).toEqual(second.own);
    expect(second.fromPass[0]!.message.content).toContain("list the dirs");
    expect(second.pass.tail).toEqual(second.pass.conversation.own);
  });
});
