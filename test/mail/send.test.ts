// sendMail: who may be written to, body rules, the row, the NOTIFY and waking an idle recipient.
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { getAgent } from "../../src/agents/refs.js";
import { createTree, forkAgent, killAgent } from "../../src/agents/tree.js";
import { agentChannel, WORK_CHANNEL } from "../../src/bus/channels.js";
import type { Db } from "../../src/db/client.js";
import { mail } from "../../src/mail/mail.sql.js";
import { sendMail } from "../../src/mail/send.js";
import { expectAgentError, recordNotifications, useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
let db: Db;

beforeAll(() => {
  db = database().db;
});

/** A root (idle) with one running child. */
async function family() {
  const root = await createTree(db, { name: "root" });
  const child = await forkAgent(db, root.id, { name: "child", prompt: "work" });
  return { root, child, treeId: root.id };
}

async function mailTo(toId: string) {
  return db.select().from(mail).where(eq(mail.to_id, toId)).orderBy(mail.id);
}

describe("sendMail", () => {
  it("stores the mail and NOTIFYs the recipient's channel with 'mail'", async () => {
    const { root, child, treeId } = await family();
    const recorder = await recordNotifications(bus(), [agentChannel(root.id)]);
    const receipt = await sendMail(db, { treeId, fromId: child.id, toId: root.id, body: "done" });
    expect(receipt.mailId).toBeGreaterThan(0);
    const [row] = await mailTo(root.id);
    expect(row).toMatchObject({
      id: receipt.mailId,
      tree_id: treeId,
      from_id: child.id,
      to_id: root.id,
      body: "done",
      consumed_at: null,
      consumed_by_event: null,
    });
    await vi.waitFor(() => expect(recorder.payloads(agentChannel(root.id))).toContain("mail"));
    recorder.stop();
  });

  it("mail from the person has no sender", async () => {
    const { child, treeId } = await family();
    await sendMail(db, { treeId, fromId: null, toId: child.id, body: "hello from the keyboard" });
    const [row] = await mailTo(child.id);
    expect(row?.from_id).toBeNull();
  });

  it("only reaches agents of the same tree", async () => {
    const { root, treeId } = await family();
    const other = await family();
    await expectAgentError(
      sendMail(db, { treeId, fromId: root.id, toId: other.child.id, body: "hi" }),
      "UNKNOWN_AGENT",
    );
    const unknown = "00000000-0000-4000-8000-000000000000";
    await expectAgentError(
      sendMail(db, { treeId, fromId: root.id, toId: unknown, body: "hi" }),
      "UNKNOWN_AGENT",
    );
    expect(await mailTo(other.child.id)).toEqual([]);
  });

  it("refuses a dead recipient with AGENT_DEAD", async () => {
    const { root, child, treeId } = await family();
    await killAgent(db, { targetId: child.id, byAgentId: null });
    await expectAgentError(
      sendMail(db, { treeId, fromId: root.id, toId: child.id, body: "too late" }),
      "AGENT_DEAD",
    );
    expect(await mailTo(child.id)).toEqual([]);
  });

  it("refuses an empty or non-text body with INVALID_ARGS", async () => {
    const { root, child, treeId } = await family();
    for (const body of ["", "  \n\t ", undefined, 42, { text: "x" }]) {
      await expectAgentError(
        sendMail(db, { treeId, fromId: root.id, toId: child.id, body }),
        "INVALID_ARGS",
      );
    }
    expect(await mailTo(child.id)).toEqual([]);
  });

  it("accepts exactly 64 KiB and refuses one byte more with LIMIT_EXCEEDED", async () => {
    const { root, child, treeId } = await family();
    const send = (body: string) => sendMail(db, { treeId, fromId: root.id, toId: child.id, body });
    await send("x".repeat(64 * 1024));
    await expectAgentError(send("x".repeat(64 * 1024 + 1)), "LIMIT_EXCEEDED");
    // The limit is in UTF-8 bytes, not characters.
    await expectAgentError(send("é".repeat(32 * 1024 + 1)), "LIMIT_EXCEEDED");
    const rows = await mailTo(child.id);
    expect(rows.map((r) => r.body.length)).toEqual([64 * 1024]);
  });

  it("wakes an idle recipient to running and NOTIFYs the work channel; a running one stays", async () => {
    const { root, child, treeId } = await family();
    const idle = await forkAgent(db, root.id, { name: "idle" });
    expect(idle.state).toBe("idle");
    const recorder = await recordNotifications(bus(), [WORK_CHANNEL]);

    const toRunning = await sendMail(db, { treeId, fromId: root.id, toId: child.id, body: "more" });
    const toIdle = await sendMail(db, { treeId, fromId: root.id, toId: idle.id, body: "wake" });

    expect(toRunning.woke).toBe(false);
    expect(toIdle.woke).toBe(true);
    expect((await getAgent(db, idle.id))?.state).toBe("running");
    expect((await getAgent(db, child.id))?.state).toBe("running");
    // Notifications arrive in commit order: once the idle agent's is here, the running
    // agent's would have been too.
    await vi.waitFor(() => expect(recorder.payloads(WORK_CHANNEL)).toContain(idle.id));
    expect(recorder.payloads(WORK_CHANNEL)).not.toContain(child.id);
    recorder.stop();
  });
});
