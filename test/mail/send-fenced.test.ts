// An agent's send (one statement) against the end of its recipient's turn: the recipient's row
// lock orders them, so either the turn's end sees the mail or the send sees `idle` and wakes it.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { sendMailIn } from "../../src/mail/send-fenced.js";
import { useTestDatabase } from "../support/db.js";
import { blockedOrSettled } from "../support/locks.js";

const database = useTestDatabase();
const db = () => database().db;

describe("sendMailIn", () => {
  it("waits while the recipient's turn is ending (its row locked), then sees it idle and wakes it", async () => {
    const root = await createTree(db());
    const child = await forkAgent(db(), root.id, { name: "kid", context: "fresh" });
    await db().execute(sql`update agents set state = 'running' where id = ${root.id}`);
    // The end of the root's turn, held open: its row lock, then idle (takePendingMail's shape).
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const inside = new Promise<void>((resolve) => (locked = resolve));
    const ending = db().transaction(async (tx) => {
      await tx.execute(sql`select 1 from agents where id = ${root.id} for update`);
      await tx.execute(sql`update agents set state = 'idle' where id = ${root.id}`);
      locked();
      await gate;
    });
    await inside;
    const send = sendMailIn(db(), {
      treeId: root.id,
      fromId: child.id,
      toId: root.id,
      body: "done",
    });
    const seen = await blockedOrSettled(db(), send);
    release();
    await ending;
    expect(seen).toBe("blocked");
    // After the turn's end committed, the send read `idle` and woke the root.
    expect((await send).woke).toBe(true);
    const [row] = (
      await db().execute<{ state: string }>(sql`select state from agents where id = ${root.id}`)
    ).rows;
    expect(row!.state).toBe("running");
  });
});
