// The end of a turn against a send committing at that moment: the turn end's row lock waits for
// the send's, and what follows the lock sees the mail that send committed (taken in, not stranded
// under an idle agent). Fails with the lock and the going idle merged into one statement, whose
// snapshot predates the wait.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { isLeaseLost } from "../../src/agents/errors.js";
import { createTree } from "../../src/agents/tree.js";
import { listEvents } from "../../src/agents/events.js";
import { takePendingMail } from "../../src/runtime/turn-end.js";
import { useTestDatabase } from "../support/db.js";
import { blockedOrSettled } from "../support/locks.js";

const database = useTestDatabase();
const db = () => database().db;

describe("takePendingMail", () => {
  it("goes idle in one call when no mail is pending", async () => {
    const root = await createTree(db(), { prompt: "go" });
    expect(await takePendingMail(db(), root)).toBe("idle");
    const [row] = (
      await db().execute<{ state: string }>(sql`select state from agents where id = ${root.id}`)
    ).rows;
    expect(row!.state).toBe("idle");
  });

  it("a worker whose lease was taken over changes nothing (LeaseLost)", async () => {
    const root = await createTree(db(), { prompt: "go" });
    await db().execute(
      sql`update agents set lease_owner = 'other', lease_epoch = 2 where id = ${root.id}`,
    );
    const error = await takePendingMail(db(), root, { owner: "me", epoch: 1 }).catch((e) => e);
    expect(isLeaseLost(error)).toBe(true);
    const [row] = (
      await db().execute<{ state: string; lease_owner: string }>(
        sql`select state, lease_owner from agents where id = ${root.id}`,
      )
    ).rows;
    expect(row).toEqual({ state: "running", lease_owner: "other" });
  });

  it("takes in the mail of a send that committed while it waited for the row lock", async () => {
    const root = await createTree(db(), { prompt: "go" });
    // A send held open after its row lock and its mail, as SEND (src/mail/send.ts) is inside.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const inside = new Promise<void>((resolve) => (locked = resolve));
    const send = db().transaction(async (tx) => {
      await tx.execute(sql`select 1 from agents where id = ${root.id} for key share`);
      await tx.execute(sql`insert into mail (tree_id, from_id, to_id, body)
                           values (${root.id}, null, ${root.id}, 'late news')`);
      locked();
      await gate;
    });
    await inside;
    const ending = takePendingMail(db(), root);
    const seen = await blockedOrSettled(db(), ending);
    release();
    await send;
    expect(seen).toBe("blocked");
    expect(await ending).toBe("continue");
    const taken = (await listEvents(db(), root.id)).filter((e) => e.kind === "mail_in");
    expect(taken.map((e) => (e.data as { message: string }).message)).toEqual(["late news"]);
    const [row] = (
      await db().execute<{ state: string; unread: number }>(sql`
        select state, (select count(*)::int from mail where to_id = ${root.id}
                                                      and consumed_at is null) as unread
          from agents where id = ${root.id}`)
    ).rows;
    expect(row).toEqual({ state: "running", unread: 0 });
  });
});
