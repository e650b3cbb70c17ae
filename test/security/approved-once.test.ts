// Issue 28 item 6, "every approved path marks the call started" (SPEC §5): a call that asked for
// approval and is then let through without a person's answer — by a rule for the tree, or by
// `--approve all` — is marked started before it runs, so a worker that crashes while it runs
// does not leave it to be run a second time by the next worker (the resume rule reruns only a
// request that never started).
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listPending } from "../../src/approvals/approvals.js";
import { createTree } from "../../src/agents/tree.js";
import { createBus, type Bus } from "../../src/bus/bus.js";
import { loadConfig } from "../../src/config/config.js";
import { createOpenAIModel } from "../../src/llm/openai.js";
import { startScheduler } from "../../src/runtime/scheduler.js";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { after } from "../runtime/e2e-support.js";

const database = useTestDatabase();
let fake: FakeModel;
let bus: Bus;
const workdir = mkdtempSync(path.join(os.tmpdir(), "warren-approved-once-"));

beforeAll(async () => {
  fake = await startFakeModel();
  bus = await createBus(database().url);
});
afterAll(async () => {
  await bus.close();
  await fake.close();
});

async function until<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const lines = (file: string) => {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
};

describe("an asked call let through without a person's answer", () => {
  const deps = () => ({
    db: database().db,
    bus,
    model: createOpenAIModel({ baseURL: fake.baseURL, maxRetries: 0 }),
    config: loadConfig({ HOME: workdir, WARREN_MODEL: "fake", OPENAI_BASE_URL: fake.baseURL }),
  });

  async function crashAfterStartDoesNotRerun(name: string, letThrough: "rule" | "all") {
    const marker = path.join(workdir, `ran-${name}`);
    // No redirection: a command that writes through one is opaque and gets no rule for the tree.
    const command = `echo x | tee -a ${marker}; sleep 4`;
    fake.script([
      { agent: name, reply: { toolCalls: [{ name: "bash", arguments: { command } }] } },
      { agent: name, match: after("bash"), reply: { text: "done" } },
    ]);
    const agent = await createTree(database().db, {
      name,
      prompt: "go",
      cwd: workdir,
      approve: "ask",
    });
    const options = { concurrency: 2, leaseSeconds: 10, pollMs: 200, treeId: agent.tree_id };
    // 1. It asks; its worker goes away while the request is pending.
    const first = await startScheduler(deps(), options);
    const request = await until("the request", async () =>
      (await listPending(database().db)).find((p) => p.agent_id === agent.id),
    );
    await first.stop();
    // 2. Meanwhile it becomes covered without an answer of its own.
    if (letThrough === "rule") {
      await database().db.execute(sql`
        insert into approvals (tree_id, agent_id, call_key, tool, subject, arguments, pattern,
                               status, scope, answered_by, answered_at)
        values (${agent.tree_id}, ${agent.id}, 'another call', 'bash', 'echo y', '{}',
                ${request.pattern}, 'allowed', 'tree', 'person (test)', now())`);
    } else {
      await database().db.execute(sql`update agents set approve = 'all' where id = ${agent.id}`);
    }
    // 3. The next worker runs it, and "crashes" while it runs: its lease taken (nothing more
    // of it is written), then stopped.
    const second = await startScheduler(deps(), options);
    await until("the command to start", async () => lines(marker) > 0);
    await database().db.execute(
      sql`update agents set lease_epoch = lease_epoch + 1 where id = ${agent.id}`,
    );
    await second.stop();
    await database().db.execute(
      sql`update agents set lease_owner = null, lease_expires_at = null where id = ${agent.id}`,
    );
    // 4. The worker after it must not run it again: it may have run.
    const third = await startScheduler(deps(), options);
    try {
      await until("the turn to end", async () => {
        const rows = await database().db.execute<{ state: string }>(
          sql`select state from agents where id = ${agent.id}`,
        );
        return rows.rows[0]?.state === "idle";
      });
    } finally {
      await third.stop();
    }
    expect(lines(marker)).toBe(1);
    const results = await database().db.execute<{ content: string }>(
      sql`select content from events where agent_id = ${agent.id} and kind = 'tool_result'`,
    );
    expect(results.rows).toHaveLength(1);
    expect(results.rows[0]!.content).toMatch(/interrupted|may have run/);
  }

  it("by a rule for the tree, is marked started: a crash after the start does not rerun it", () =>
    crashAfterStartDoesNotRerun("by-rule", "rule"));

  it("by --approve all, is marked started: a crash after the start does not rerun it", () =>
    crashAfterStartDoesNotRerun("by-all", "all"));
});
