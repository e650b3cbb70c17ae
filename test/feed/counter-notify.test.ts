// The feed's agent trigger (migrations 0002, 0004): a change to the cached or reasoning token
// counters of a watched tree sends a hint, as the other counters do; unseen columns send none.
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { treeChannel } from "../../src/bus/channels.js";
import { watchTree } from "../../src/feed/watchers.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();

describe("agents_feed_update", () => {
  it("hints at changes of cached_tokens and reasoning_tokens, not of lease columns", async () => {
    const { db, url } = database();
    const root = await createTree(db, { name: "root" });
    await watchTree(db, randomUUID(), root.id);
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    try {
      const hints: string[] = [];
      let arrived = () => {};
      listener.on("notification", (n) => {
        hints.push(n.payload ?? "");
        arrived();
      });
      await listener.query(`LISTEN "${treeChannel(root.id)}"`);
      const update = (set: ReturnType<typeof sql>) =>
        db.execute(sql`update agents set ${set} where id = ${root.id}`);
      await update(sql`cached_tokens = cached_tokens + 5`);
      await update(sql`lease_expires_at = now()`);
      await update(sql`reasoning_tokens = reasoning_tokens + 3`);
      // Hints arrive in commit order: a hint for the lease update would come second.
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`hints so far: ${hints.join(", ")}`)),
          10_000,
        );
        arrived = () => {
          if (hints.length < 2) return;
          clearTimeout(timer);
          resolve();
        };
        arrived();
      });
      // One more round trip on the listening connection: anything still queued is delivered first.
      await listener.query("select 1");
      expect(hints).toEqual([`a:${root.id}`, `a:${root.id}`]);
    } finally {
      await listener.end();
    }
  });
});
