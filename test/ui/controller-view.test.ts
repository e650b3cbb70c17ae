// Showing an agent: the first read is what the screen holds (firstPage), older history pages in as
// the view reaches it, and the history's arrival asks for a paint as the key that asked for it
// does (onShown), not after the frame interval.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import type { Db } from "../../src/db/client.js";
import type { Feed } from "../../src/feed/types.js";
import { createController, PAGE_SIZE, type ControllerOptions } from "../../src/ui/controller.js";
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
  it("reads the screen's worth of its newest history, then older pages as the view asks", async () => {
    const { db } = database();
    const root = await createTree(db, { name: "main", model: "gpt-test" });
    await fill(db, root.id, PAGE_SIZE + 50);
    const controller = controllerFor(db, root.id, { firstPage: () => 30 });
    await controller.start();
    const newest = Array.from({ length: 30 }, (_, i) => `event ${PAGE_SIZE + 21 + i}`);
    expect(shownTexts(controller)).toEqual(newest);
    expect(controller.state.hasOlder).toBe(true);
    await controller.loadOlder();
    expect(shownTexts(controller)).toHaveLength(30 + PAGE_SIZE);
    expect(shownTexts(controller)[0]).toBe("event 21");
    await controller.loadOlder();
    expect(shownTexts(controller)[0]).toBe("event 1");
    expect(controller.state.hasOlder).toBe(false);
    controller.close();
  });

  it("reads a page when no screen size is given, and all of a short history", async () => {
    const { db } = database();
    const root = await createTree(db, { name: "main", model: "gpt-test" });
    const child = await forkAgent(db, root.id, { name: "short", context: "fresh" });
    await fill(db, root.id, PAGE_SIZE + 1);
    await fill(db, child.id, 5);
    const controller = controllerFor(db, root.id, { firstPage: () => 30 });
    const paged = controllerFor(db, root.id);
    await Promise.all([controller.start(), paged.start()]);
    expect(shownTexts(paged)).toHaveLength(PAGE_SIZE);
    await controller.view(child.id);
    expect(shownTexts(controller)).toEqual(["event 1", "event 2", "event 3", "event 4", "event 5"]);
    expect(controller.state.hasOlder).toBe(false);
    controller.close();
    paged.close();
  });

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
