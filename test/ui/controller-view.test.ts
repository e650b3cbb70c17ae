// Showing an agent: the history's arrival asks for a paint as the key that asked for it does
// (onShown), not after the frame interval.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import type { Db } from "../../src/db/client.js";
import type { Feed } from "../../src/feed/types.js";
import { createController, type ControllerOptions } from "../../src/ui/controller.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();

const quietFeed = (treeId: string): Feed => ({
  treeId,
  subscribe: () => () => {},
  watchStreams: () => {},
  close: async () => {},
});

/** `count` user events numbered 1… on the agent. */
async function fill(db: Db, agentId: string, count: number) {
  await db.execute(sql`
    insert into events (agent_id, kind, content)
    select ${agentId}::uuid, 'user', 'event ' || i from generate_series(1, ${count}) as i`);
}

const shownTexts = (controller: ReturnType<typeof createController>) =>
  controller.entries().map((entry) => (entry.kind === "event" ? entry.event.content : entry.kind));

function controllerFor(db: Db, rootId: string, options: Partial<ControllerOptions> = {}) {
  return createController({
    db,
    feed: quietFeed(rootId),
    rootId,
    onChange: () => {},
    onError: (message) => expect.fail(message),
    ...options,
  });
}

describe("showing an agent", () => {
  it("asks for the paint of a switched-to agent's history with onShown", async () => {
    const { db } = database();
    const root = await createTree(db, { name: "main", model: "gpt-test" });
    const child = await forkAgent(db, root.id, { name: "child", context: "fresh" });
    await fill(db, child.id, 3);
    const asked: string[] = [];
    const controller = controllerFor(db, root.id, {
      onChange: () => asked.push("change"),
      onShown: () => asked.push(`shown ${shownTexts(controller).length}`),
    });
    await controller.start();
    asked.length = 0;
    await controller.view(child.id);
    // The switch itself (a loading frame), then the history once it is there.
    expect(asked).toEqual(["change", "shown 3"]);
    controller.close();
  });
});
