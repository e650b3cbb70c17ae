// A scheduler fills its free slots with one claim (leases.ts claimUpTo): up to the number asked,
// each claimed agent's epoch moved on, the agents it runs already skipped, and a short answer
// meaning no more work (the scheduler then stops claiming until a NOTIFY or the poll).
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { claimUpTo } from "../../src/runtime/leases.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();

/** A tree whose root and `children` children all have work (state running, no lease). */
async function treeWithWork(children: number) {
  const { db } = database();
  const root = await createTree(db, { name: "root" });
  for (let i = 0; i < children; i++) await forkAgent(db, root.id, { name: `c${i}`, prompt: "go" });
  await db.execute(sql`update agents set state = 'running' where tree_id = ${root.tree_id}`);
  const rows = await db.execute<{ id: string; lease_epoch: string }>(
    sql`select id, lease_epoch from agents where tree_id = ${root.tree_id}`,
  );
  return {
    treeId: root.tree_id,
    epochs: new Map(rows.rows.map((r) => [r.id, Number(r.lease_epoch)])),
  };
}

describe("claimUpTo", () => {
  it("claims at most the slots asked for, each once, with its epoch moved on", async () => {
    const { db } = database();
    const { treeId, epochs } = await treeWithWork(3); // four agents
    const first = await claimUpTo(db, "w1", 30, 3, treeId);
    expect(first).toHaveLength(3);
    for (const agent of first) {
      expect(agent.lease_owner).toBe("w1");
      expect(agent.lease_epoch).toBe(epochs.get(agent.id)! + 1);
    }
    // The rest: two were asked for, one is left (a short answer: no more work).
    const second = await claimUpTo(db, "w2", 30, 2, treeId);
    expect(second).toHaveLength(1);
    expect(first.map((a) => a.id)).not.toContain(second[0]!.id);
    expect(await claimUpTo(db, "w3", 30, 5, treeId)).toEqual([]);
  });

  it("skips the agents the scheduler runs already, even with their lease lapsed", async () => {
    const { db } = database();
    const { treeId } = await treeWithWork(1);
    const claimed = await claimUpTo(db, "w1", 30, 2, treeId);
    expect(claimed).toHaveLength(2);
    await db.execute(
      sql`update agents set lease_expires_at = now() - interval '1 s' where tree_id = ${treeId}`,
    );
    const mine = claimed.map((a) => a.id);
    const again = await claimUpTo(db, "w1", 30, 2, treeId, [mine[0]!]);
    expect(again.map((a) => a.id)).toEqual([mine[1]]);
  });
});
