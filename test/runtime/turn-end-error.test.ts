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

describe("a turn that failed for good", () => {
  it("leaves the agent failed until mail starts its next turn, which clears it", async () => {
    const { db } = rig.database();
    const fake = rig.fake();
    fake.script([
      { agent: "lone", reply: { status: 404, text: "no such model here" } },
      { agent: "lone", reply: { text: "back on my feet" } },
    ]);
    const root = await createTree(db, { name: "lone", prompt: "first question", model: "fake" });
    const row = async () =>
      (await db.query.agents.findMany({ where: (a, { eq }) => eq(a.id, root.id) }))[0]!;
    const failed = await until("the agent failed", async () => {
      const agent = await row();
      return agent.state === "idle" && agent.failure !== null ? agent : undefined;
    });
    expect(failed.failure).toMatch(/^model error: .*404.*no such model here/);
    await sendMail(db, { treeId: root.id, fromId: null, toId: root.id, body: "try again" });
    await until("the answer to the mail", async () =>
      (await kindsOf(db, root.id)).at(-1) === "assistant" ? true : undefined,
    );
    const after = await until("idle again", async () => {
      const agent = await row();
      return agent.state === "idle" ? agent : undefined;
    });
    expect(after.failure).toBeNull();
    expect(await kindsOf(db, root.id)).toEqual(["user", "error", "mail_in", "assistant"]);
    fake.assertAllUsed();
  });

  it("is not a spent budget: that agent is idle, not failed", async () => {
    const { db } = rig.database();
    rig.fake().script([]);
    const root = await createTree(db, {
      name: "thrifty",
      prompt: "first question",
      model: "fake",
      budget: { turns: 0 },
    });
    await until("the budget's error", async () =>
      (await kindsOf(db, root.id)).includes("error") ? true : undefined,
    );
    const [agent] = await db.query.agents.findMany({ where: (a, { eq }) => eq(a.id, root.id) });
    expect(agent!.failure).toBeNull();
  });
});
