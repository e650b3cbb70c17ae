// latestTurnStart (what a resumed turn's checkpoint is keyed by) numbers turns as listTurns does:
// a turn starts at a `user` or `mail_in` event that does not follow another one.
import { describe, expect, it } from "vitest";
import { appendEvent } from "../../src/agents/events.js";
import { latestTurnStart, listTurns } from "../../src/agents/rewind.js";
import { createTree } from "../../src/agents/tree.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();

describe("latestTurnStart", () => {
  it("is the start of listTurns' last turn, mail taken in together starting one turn", async () => {
    const { db } = database();
    const agent = await createTree(db, { name: "turns" });
    expect(await latestTurnStart(db, agent.id)).toBeUndefined();
    await appendEvent(db, agent.id, "user", "one");
    await appendEvent(db, agent.id, "assistant", "done one");
    const second = await appendEvent(db, agent.id, "mail_in", "two");
    await appendEvent(db, agent.id, "mail_in", "two, more");
    await appendEvent(db, agent.id, "assistant", "working");
    await appendEvent(db, agent.id, "tool_result", "{}");
    const turns = await listTurns(db, agent.id);
    expect(turns.map((t) => t.startEvent).at(-1)).toBe(second.id);
    expect(await latestTurnStart(db, agent.id)).toBe(second.id);
  });
});
