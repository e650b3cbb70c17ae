// Issue 42: a child's final text is mailed to its parent exactly once, also across a crash. The
// rows are left as a worker that died at each point would leave them — the answer recorded and
// the turn not ended (died before the mail), then the mail sent and the agent still running
// (died after the mail, before going idle) — and a real runtime resumes the child each time:
// the parent gets one mail, marked final, and nothing is asked of the model again.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { appendEvent } from "../../src/agents/events.js";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { loadConfig } from "../../src/config/config.js";
import type { Db } from "../../src/db/client.js";
import { startRuntime } from "../../src/runtime/pool.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();

/** Runs a runtime until `agentId` is idle (it resumes the agent's unfinished turn). */
async function resume(db: Db, agentId: string): Promise<void> {
  const config = loadConfig({
    HOME: "/nonexistent",
    WARREN_MODEL: "fake",
    // No model answers here: a request would fail the turn (an `error` event), never hang it.
    OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    OPENAI_API_KEY: "test",
  });
  const runtime = await startRuntime({ url: database().url, config, threads: 1 });
  try {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const rows = await db.execute<{ state: string }>(
        sql`select state from agents where id = ${agentId}`,
      );
      if (rows.rows[0]?.state === "idle") return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error("the child was not resumed to idle");
  } finally {
    await runtime.stop();
  }
}

describe("a child's final answer across a crash", () => {
  it("is mailed once: resumed before the mail, and again after it", async () => {
    const { db } = database();
    const root = await createTree(db, { name: "root" });
    const child = await forkAgent(db, root.id, { name: "worker" });
    // As the fork tool makes it (it reports to its parent), with its task and its answer
    // recorded, and its turn never ended: the worker died right after the answer's commit.
    await db.execute(sql`
      update agents set caps = '{"tools":null,"file_access":"cwd","sandbox":"auto","reports":true}',
                        state = 'running'
       where id = ${child.id}`);
    await appendEvent(db, child.id, "user", "count the files");
    await appendEvent(db, child.id, "assistant", "there are 7 files", {
      tool_calls: [],
      finish_reason: "stop",
    });

    await resume(db, child.id);
    // Died after the mail's commit, before the agent went idle: resumed once more.
    await db.execute(sql`update agents set state = 'running' where id = ${child.id}`);
    await resume(db, child.id);

    const mail = await db.execute<{ body: string; final: boolean; from_id: string }>(
      sql`select body, final, from_id from mail where to_id = ${root.id}`,
    );
    expect(mail.rows).toEqual([{ body: "there are 7 files", final: true, from_id: child.id }]);
    const events = await db.execute<{ kind: string }>(
      sql`select kind from events where agent_id = ${child.id} order by id`,
    );
    // No model request was made (it would have failed: an `error` event).
    expect(events.rows.map((e) => e.kind)).toEqual(["user", "assistant", "mail_out"]);
  });
});
