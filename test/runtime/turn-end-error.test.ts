// A turn that ended in an `error` event is over: mail that wakes the agent later starts a new turn
// from that mail, instead of asking the model again about the request that failed.
import { describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { sendMail } from "../../src/mail/send.js";
import { kindsOf } from "./e2e-support.js";
import { until, useRuntime } from "../feed/rig.js";
import { agentNameOf } from "../support/fake-model.js";

const rig = useRuntime();

describe("an error ends the turn", () => {
  it("wakes on later mail with the mail as the last message, not the failed request again", async () => {
    const { db } = rig.database();
    const fake = rig.fake();
    fake.script([
      { agent: "solo", reply: { status: 500, text: "the GPUs are on fire" } },
      { agent: "solo", reply: { text: "thanks for the mail" } },
    ]);
    const root = await createTree(db, { name: "solo", prompt: "first question", model: "fake" });
    await until("the failed turn", async () =>
      (await kindsOf(db, root.id)).includes("error") ? true : undefined,
    );
    await until("the agent idle", async () => {
      const kinds = await kindsOf(db, root.id);
      const [row] = await db.query.agents.findMany({ where: (a, { eq }) => eq(a.id, root.id) });
      return row?.state === "idle" && kinds.at(-1) === "error" ? true : undefined;
    });
    await sendMail(db, { treeId: root.id, fromId: null, toId: root.id, body: "are you there?" });
    await until("the answer to the mail", async () =>
      (await kindsOf(db, root.id)).at(-1) === "assistant" ? true : undefined,
    );
    const requests = fake.requests.filter((r) => agentNameOf(r) === "solo");
    expect(requests).toHaveLength(2);
    expect(requests[1]!.lastMessage?.content).toContain("are you there?");
    expect(await kindsOf(db, root.id)).toEqual(["user", "error", "mail_in", "assistant"]);
    fake.assertAllUsed();
  });
});
