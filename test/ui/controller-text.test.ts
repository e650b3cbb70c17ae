// The viewed agent's live text asks for a paint of its own (onText: painted without waiting for
// the frame interval); a batch with anything else in it asks as every change does (onChange).
import { describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import type { Feed, FeedUpdate } from "../../src/feed/types.js";
import { createController } from "../../src/ui/controller.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();

describe("the controller's paint requests", () => {
  it("tells live text of the viewed agent apart from other changes", async () => {
    const { db } = database();
    const root = await createTree(db, { name: "main", model: "gpt-test" });
    let listener: (updates: FeedUpdate[]) => void = () => {};
    const feed: Feed = {
      treeId: root.id,
      subscribe: (l) => ((listener = l), () => {}),
      watchStreams: () => {},
      close: async () => {},
    };
    const asked: string[] = [];
    const controller = createController({
      db,
      feed,
      rootId: root.id,
      onChange: () => asked.push("change"),
      onText: () => asked.push("text"),
      onError: (message) => expect.fail(message),
    });
    await controller.start();
    asked.length = 0;
    const stream = { agentId: root.id, text: "Hel", reasoning: "", live: true };
    listener([{ type: "stream", stream }]);
    listener([{ type: "stream", stream: { ...stream, text: "Hello" } }]);
    listener([
      { type: "stream", stream: { ...stream, text: "Hello," } },
      { type: "agent", agent: { ...root, activity: "thinking" } },
    ]);
    expect(asked).toEqual(["text", "text", "change"]);
    expect(controller.entries().at(-1)).toMatchObject({ kind: "stream", text: "Hello," });
    controller.close();
  });
});
