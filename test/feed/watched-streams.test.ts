// A TUI's stream traffic follows what it shows: only the agents a feed watches have their
// streaming text written and hinted; another agent streaming in the same tree costs nothing.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { sendInput } from "../../src/mail/input.js";
import { isEvent, openObserver, until, useRuntime } from "./rig.js";

const rig = useRuntime();

describe("watched streams", () => {
  it("writes and hints the stream of the watched agent only", async () => {
    const { db, url } = rig.database();
    const slow = { text: "a slow answer ".repeat(20), chunkSize: 7, chunkDelayMs: 15 };
    rig.fake().script([
      { agent: "shown", reply: slow },
      { agent: "hidden", reply: slow },
    ]);
    const root = await createTree(db, { name: "hidden", model: "fake" });
    const child = await forkAgent(db, root.id, { name: "shown", context: "fresh" });
    const observer = await openObserver(url, root.id);
    try {
      observer.feed.watchStreams([child.id]);
      await until("the watch registered", async () => {
        const rows = await db.execute<{ n: number }>(sql`
          select count(*)::int as n from feed_watchers where ${child.id}::uuid = any(streams)`);
        return rows.rows[0]!.n > 0 ? true : undefined;
      });
      await sendInput(db, root.id, "go");
      await sendInput(db, child.id, "go");
      await observer.until("the shown answer", isEvent(child.id, "assistant"));
      await observer.until("the hidden answer", isEvent(root.id, "assistant"));
      const streamed = observer.updates.filter((u) => u.type === "stream");
      expect(streamed.some((u) => u.type === "stream" && u.stream.agentId === child.id)).toBe(true);
      expect(streamed.some((u) => u.type === "stream" && u.stream.agentId === root.id)).toBe(false);
      const rows = await db.execute<{ agent_id: string }>(sql`select agent_id from agent_streams`);
      expect(rows.rows.map((r) => r.agent_id)).toEqual([child.id]);
    } finally {
      await observer.close();
    }
  });
});
