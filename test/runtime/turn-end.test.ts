// The end of a turn against a send committing at that moment: the turn end's row lock waits for
// the send's, and what follows the lock sees the mail that send committed (taken in, not stranded
// under an idle agent). Fails with the lock and the going idle merged into one statement, whose
// snapshot predates the wait. The same for the end a final answer's own statement makes.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { isLeaseLost } from "../../src/agents/errors.js";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { listEvents } from "../../src/agents/events.js";
import { settleTurnEnd, takePendingMail } from "../../src/runtime/turn-end.js";
import { recordAnswer, type Answer } from "../../src/runtime/record-answer.js";
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
    const send = await heldSend(root.id, root.tree_id);
    const ending = takePendingMail(db(), root);
    const seen = await blockedOrSettled(db(), ending);
    send.release();
    await send.done;
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

  it("says in each mail_in event whether the mail is a child's final answer, and its result", async () => {
    const root = await createTree(db(), { prompt: "go" });
    const child = await forkAgent(db(), root.id, { name: "scout", prompt: "look" });
    await db().execute(sql`
      insert into mail (tree_id, from_id, to_id, body, final, result)
      values (${root.tree_id}, ${child.id}, ${root.id}, 'an update', false, null),
             (${root.tree_id}, ${child.id}, ${root.id}, '{"count":3}', true, '{"count":3}'),
             (${root.tree_id}, ${child.id}, ${root.id}, 'plain text', true, null)`);
    expect(await takePendingMail(db(), root)).toBe("continue");
    const taken = (await listEvents(db(), root.id)).filter((e) => e.kind === "mail_in");
    // The TUI marks the final ones and draws the result as fields (ui/views/entry-lines.ts).
    expect(taken.map((e) => [e.data?.message, e.data?.final, e.data?.result])).toEqual([
      ["an update", undefined, undefined],
      ['{"count":3}', true, { count: 3 }],
      ["plain text", true, undefined],
    ]);
  });
});

/** A send held open after its row lock and its mail, as SEND (src/mail/send.ts) is inside. */
async function heldSend(agentId: string, treeId: string) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const inside = new Promise<void>((resolve) => (locked = resolve));
  const done = db().transaction(async (tx) => {
    await tx.execute(sql`select 1 from agents where id = ${agentId} for key share`);
    await tx.execute(sql`insert into mail (tree_id, from_id, to_id, body)
                         values (${treeId}, null, ${agentId}, 'late news')`);
    locked();
    await gate;
  });
  await inside;
  return { release, done };
}

const finalAnswer: Answer = {
  text: "done",
  data: { tool_calls: [] },
  usage: { inputTokens: 10, outputTokens: 2 },
  calls: [],
  activity: null,
  endsTurn: true,
};

async function stateOf(agentId: string) {
  const [row] = (
    await db().execute<{ state: string; unread: number; output_tokens: string }>(sql`
      select state, output_tokens::text,
             (select count(*)::int from mail where to_id = ${agentId} and consumed_at is null)
               as unread
        from agents where id = ${agentId}`)
  ).rows;
  return row;
}

describe("an answer without calls", () => {
  it("ends the turn in the statement that records it", async () => {
    const root = await createTree(db(), { prompt: "go" });
    const { ended, fresh } = await recordAnswer(db(), root, finalAnswer, { key: "answer:1" });
    expect({ ended, fresh }).toEqual({ ended: "idle", fresh: true });
    expect(await stateOf(root.id)).toEqual({ state: "idle", unread: 0, output_tokens: "2" });
  });

  it("leaves the mail of a send that committed while it waited pending, for the turn to take in", async () => {
    const root = await createTree(db(), { prompt: "go" });
    const send = await heldSend(root.id, root.tree_id);
    const recording = recordAnswer(db(), root, finalAnswer, { key: "answer:1" });
    const seen = await blockedOrSettled(db(), recording);
    send.release();
    await send.done;
    expect(seen).toBe("blocked");
    const { ended } = await recording;
    expect(ended).toBe("pending");
    expect(await stateOf(root.id)).toEqual({ state: "running", unread: 1, output_tokens: "2" });
    expect(await settleTurnEnd(db(), root, ended!)).toBe("continue");
    expect((await stateOf(root.id))!.unread).toBe(0);
  });

  it("a retry that finds the answer recorded ends nothing and counts nothing again", async () => {
    const root = await createTree(db(), { prompt: "go" });
    await recordAnswer(db(), root, { ...finalAnswer, endsTurn: false }, { key: "answer:1" });
    const retry = await recordAnswer(db(), root, finalAnswer, { key: "answer:1" });
    expect({ ended: retry.ended, fresh: retry.fresh }).toEqual({ ended: null, fresh: false });
    expect(await stateOf(root.id)).toEqual({ state: "running", unread: 0, output_tokens: "2" });
  });
});
