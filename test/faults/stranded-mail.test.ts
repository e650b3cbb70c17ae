// An abnormal end of turn (a model error) takes pending mail like a normal one (SPEC §3): mail
// that arrived during the failing call wakes the agent instead of sitting under an idle agent,
// and the parent's fan-in never reports `idle` for a child with queued mail.
import { describe, expect, it } from "vitest";
import { sendMail } from "../../src/mail/send.js";
import {
  after,
  agentNamed,
  forkedIds,
  isFirst,
  lastToolResults,
  mailOf,
  requestsOf,
  useE2E,
} from "../runtime/e2e-support.js";

const e2e = useE2E();

describe("mail during a failing turn", () => {
  it("is taken in after the model error, and the agent answers it", async () => {
    const db = e2e.db();
    let sent: Promise<unknown> | undefined;
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [{ name: "fork", arguments: { name: "c", prompt: "work", context: "fresh" } }],
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: (req) => ({
          toolCalls: [
            { name: "wait", arguments: { timeout: 30, from_agents: [forkedIds(req).c] } },
          ],
        }),
      },
      { agent: "root", match: after("wait"), reply: { text: "done" } },
      {
        agent: "c",
        match: isFirst,
        // While this call fails, the person mails the child.
        reply: () => {
          sent = (async () => {
            const child = (await db.query.agents.findFirst({
              where: (a, { eq }) => eq(a.name, "c"),
            }))!;
            await sendMail(db, {
              treeId: child.tree_id,
              fromId: null,
              toId: child.id,
              body: "one more thing",
            });
          })();
          return { status: 400, text: "bad request", delayMs: 500 };
        },
      },
      {
        agent: "c",
        match: (req) => (req.lastMessage?.content ?? "").includes("one more thing"),
        reply: { text: "handled it" },
      },
    ]);

    const run = await e2e.prompt("go");
    await sent;
    expect(run.code, run.stderr).toBe(0);
    const child = await agentNamed(db, run.json!.tree_id, "c");
    expect(child.state).toBe("idle");
    const mail = await mailOf(db, run.json!.tree_id);
    expect(mail).toHaveLength(1);
    expect(mail[0]!.consumed_by_event).not.toBeNull();
    expect(requestsOf(e2e.fake(), "c")).toHaveLength(2);
    // The parent's fan-in saw the child only once it had nothing queued.
    const waited = lastToolResults(requestsOf(e2e.fake(), "root").at(-1)!);
    expect(waited[0]!.value).toMatchObject({ results: [{ status: "idle" }] });
  });
});
