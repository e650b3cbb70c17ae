// An inherited fork's context (SPEC §7, "Requests a prompt cache can serve"): its parent's request
// that made the fork call, byte for byte, then one message saying who it is; later messages extend
// that; a compacted parent's fork shares the compacted request; another profile keeps the quoted
// shape; the child's own compaction gives it back its own system prompt.
import { describe, expect, it } from "vitest";
import { appendEvent } from "../../src/agents/events.js";
import { getAgent } from "../../src/agents/refs.js";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { INHERITED_HEAD } from "../../src/llm/framing.js";
import { buildContext } from "../../src/runtime/context.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();

const bash = (id: string) => ({ tool_calls: [{ id, name: "bash", arguments: "{}" }] });
const forkCall = (id: string) => ({ tool_calls: [{ id, name: "fork", arguments: "{}" }] });

/** A root that worked a little, its request before the fork call, and the fork call's event. */
async function rootAboutToFork(withSummary: boolean) {
  const { db } = database();
  const root = await createTree(db, { name: "root" });
  await appendEvent(db, root.id, "user", "Survey the repository.");
  const a1 = await appendEvent(db, root.id, "assistant", "Looking.", bash("c1"));
  await appendEvent(db, root.id, "tool_result", "src/ test/", { tool_call_id: "c1" });
  if (withSummary) {
    await appendEvent(db, root.id, "summary", "You listed the top folders.", {
      through_event: a1.id + 1,
    });
    await appendEvent(db, root.id, "user", "Now go deeper.");
  }
  const request = await buildContext(db, (await getAgent(db, root.id))!);
  const answer = await appendEvent(db, root.id, "assistant", "", forkCall("f1"));
  return { db, root, request, answer };
}

describe("an inherited fork's context", () => {
  for (const compacted of [false, true]) {
    it(`is its parent's request, then who it is${compacted ? " (parent compacted)" : ""}`, async () => {
      const { db, root, request, answer } = await rootAboutToFork(compacted);
      if (compacted) expect(request[1]!.content).toMatch(/^Summary of your earlier conversation/);
      const child = await forkAgent(db, root.id, {
        name: "helper",
        prompt: "Count the files.",
        context: "inherit",
        inheritUntilEvent: answer.id,
      });
      // The parent goes on meanwhile: nothing of that reaches the child.
      await appendEvent(db, root.id, "tool_result", "{}", { tool_call_id: "f1" });
      const first = await buildContext(db, child);
      expect(first.slice(0, -1)).toEqual(request);
      const told = first.at(-1)!;
      expect(told.role).toBe("user");
      expect(told.content).toMatch(new RegExp(`^${INHERITED_HEAD}`));
      expect(told.content).toContain(`Your name: helper\nYour id: ${child.id}\n`);
      expect(told.content).toContain(`Your parent: root (${root.id})`);
      expect(told.content).toMatch(/send with to "parent"[^]*Your task:\nCount the files\.$/);

      // Its own answer and a mail wake extend that request.
      await appendEvent(db, child.id, "assistant", "12 files.");
      await appendEvent(db, child.id, "mail_in", '<mail from="root">\nThanks.\n</mail>');
      const later = await buildContext(db, child);
      expect(later.slice(0, first.length)).toEqual(first);
      expect(later).toHaveLength(first.length + 2);
    });
  }

  it("keeps the quoted shape for another profile, and its own prompt after its own compaction", async () => {
    const { db, root, answer } = await rootAboutToFork(false);
    const other = await forkAgent(db, root.id, {
      name: "reader",
      prompt: "Read it.",
      context: "inherit",
      inheritUntilEvent: answer.id,
      profile: "reader",
    });
    const quoted = await buildContext(db, other);
    expect(quoted[0]!.content).toContain("Your name: reader");
    expect(quoted[1]!.content).toMatch(/^The conversation of your parent root so far/);
    expect(quoted[2]!.content).toBe("Your task:\nRead it.");

    const child = await forkAgent(db, root.id, {
      name: "helper",
      prompt: "Count the files.",
      context: "inherit",
      inheritUntilEvent: answer.id,
    });
    const task = await appendEvent(db, child.id, "assistant", "Counting.");
    await appendEvent(db, child.id, "summary", "You are counting files.", {
      through_event: task.id,
    });
    const compacted = await buildContext(db, child);
    expect(compacted[0]!.content).toContain(`Your name: helper\nYour id: ${child.id}`);
    expect(compacted[1]!.content).toMatch(/^Summary of your earlier conversation/);
  });
});
