// The tree's figures a frame reads (counts, tokens, cost, marks, neighbours) are kept between
// frames and follow every change of an agent row: from the feed, a fork and a reap in this process.
import { describe, expect, it } from "vitest";
import type { AgentRow } from "../../src/agents/agents.sql.js";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import type { Feed, FeedUpdate } from "../../src/feed/types.js";
import { createController } from "../../src/ui/controller.js";
import { createTreeFigures } from "../../src/ui/tree-figures.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();

/** A feed whose updates the test delivers. */
function scriptedFeed(treeId: string) {
  let listener: (updates: FeedUpdate[]) => void = () => {};
  const feed: Feed = {
    treeId,
    subscribe: (l) => {
      listener = l;
      return () => {};
    },
    watchStreams: () => {},
    close: async () => {},
  };
  return { feed, deliver: (updates: FeedUpdate[]) => listener(updates) };
}

describe("the tree's figures", () => {
  it("are the same object until an agent row changes, then count the change", async () => {
    const { db } = database();
    const root = await createTree(db, { name: "main", model: "gpt-test" });
    const kid = await forkAgent(db, root.id, { name: "kid" });
    const { feed, deliver } = scriptedFeed(root.id);
    const controller = createController({
      db,
      feed,
      rootId: root.id,
      onChange: () => {},
      onError: (message) => expect.fail(message),
    });
    await controller.start();
    const prices = { "gpt-test": { input: 2, output: 8 } };
    const tree = createTreeFigures(controller.state, { prices, model: "gpt-test" });

    const before = tree.figures();
    expect(before.tokens.tokens).toBe(0);
    expect(before.counts).toEqual({ running: 0, waiting: 0, idle: 2, dead: 0 });
    expect(tree.figures()).toBe(before);
    expect(tree.nav()?.children).toBe(1);

    const busy: AgentRow = { ...kid, state: "running", input_tokens: 1_000, output_tokens: 100 };
    deliver([{ type: "agent", agent: busy }]);
    const after = tree.figures();
    expect(after.tokens.tokens).toBe(1_100);
    expect(after.counts).toEqual({ running: 1, waiting: 0, idle: 1, dead: 0 });
    expect(after.cost).toBeCloseTo((1_000 * 2 + 100 * 8) / 1_000_000);

    const other = await forkAgent(db, root.id, { name: "other" });
    controller.putAgent(other);
    expect(
      tree
        .figures()
        .agents.map((a) => a.name)
        .sort(),
    ).toEqual(["kid", "main", "other"]);
    expect(tree.nav()?.children).toBe(2);

    // Reaped: out of the list and the counts, its tokens still the tree's.
    controller.markReaped([kid.id]);
    expect(tree.figures().counts).toEqual({ running: 0, waiting: 0, idle: 2, dead: 0 });
    expect(tree.figures().tokens.tokens).toBe(1_100);
    controller.close();
  });
});
