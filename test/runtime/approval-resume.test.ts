// A call waiting for approval survives its worker: stopped (shutdown, or a takeover after its
// lease expired), the next worker to claim the agent finds the same request and waits for it
// again; the person's answer then runs the call once.
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { answerApproval, listPending } from "../../src/approvals/approvals.js";
import { createTree } from "../../src/agents/tree.js";
import { startScheduler } from "../../src/runtime/scheduler.js";
import { useTestDatabase } from "../support/db.js";
import { useFakeRuntime } from "../support/fake-runtime.js";
import { until } from "../support/until.js";
import { after } from "./e2e-support.js";

const database = useTestDatabase();
const runtime = useFakeRuntime(database);
const workdir = mkdtempSync(path.join(os.tmpdir(), "warren-approval-resume-"));

describe("a call waiting for approval", () => {
  const deps = () => runtime.deps(runtime.config(undefined, workdir));

  /** An agent asking to append to `marker`, its first worker stopped while it waits. */
  async function askedThenStopped(name: string, marker: string) {
    runtime.fake().script([
      {
        agent: name,
        reply: { toolCalls: [{ name: "bash", arguments: { command: `echo x >> ${marker}` } }] },
      },
      { agent: name, match: after("bash"), reply: { text: "done" } },
    ]);
    const agent = await createTree(database().db, {
      name,
      prompt: "go",
      cwd: workdir,
      approve: "ask",
    });
    const options = { concurrency: 2, leaseSeconds: 10, pollMs: 200, treeId: agent.tree_id };
    const first = await startScheduler(deps(), options);
    const request = await until("the request", async () =>
      (await listPending(database().db)).find((p) => p.agent_id === agent.id),
    );
    await first.stop(); // the worker goes away while the call waits
    return { agent, request, options };
  }

  async function finish(agentId: string, options: Parameters<typeof startScheduler>[1]) {
    const second = await startScheduler(deps(), options);
    try {
      await until("the turn to end", async () => {
        const rows = await database().db.execute<{ state: string }>(
          sql`select state from agents where id = ${agentId}`,
        );
        return rows.rows[0]?.state === "idle";
      });
    } finally {
      await second.stop();
    }
    const results = await database().db.execute<{ content: string }>(
      sql`select content from events where agent_id = ${agentId} and kind = 'tool_result'`,
    );
    expect(results.rows).toHaveLength(1);
    return JSON.parse(results.rows[0]!.content) as Record<string, unknown>;
  }

  it("is waited for again by the next worker, and runs once when allowed", async () => {
    const marker = path.join(workdir, "ran-waited");
    const { agent, request, options } = await askedThenStopped("patient", marker);
    const second = await startScheduler(deps(), options);
    try {
      await until("the second worker to hold the agent", async () => {
        const rows = await database().db.execute<{ owner: string | null }>(
          sql`select lease_owner as owner from agents where id = ${agent.id}`,
        );
        return rows.rows[0]?.owner === second.owner;
      });
      const pending = await listPending(database().db);
      expect(pending.map((p) => p.id)).toContain(request.id); // the same request, not a new one
      expect(pending.filter((p) => p.agent_id === agent.id)).toHaveLength(1);
      await answerApproval(database().db, request.id, { allow: true, by: "person (test)" });
      await until("the turn to end", async () => {
        const rows = await database().db.execute<{ state: string }>(
          sql`select state from agents where id = ${agent.id}`,
        );
        return rows.rows[0]?.state === "idle";
      });
    } finally {
      await second.stop();
    }
    expect(readFileSync(marker, "utf8")).toBe("x\n");
  });

  it("answered while no worker held it, runs once on the next", async () => {
    const marker = path.join(workdir, "ran-between");
    const { agent, request, options } = await askedThenStopped("between", marker);
    await answerApproval(database().db, request.id, { allow: true, by: "person (test)" });
    expect(await finish(agent.id, options)).toMatchObject({ exit_code: 0 });
    expect(readFileSync(marker, "utf8")).toBe("x\n");
  });

  it("once started, is not run again by the next worker (it may have run)", async () => {
    const marker = path.join(workdir, "ran-started");
    const { agent, request, options } = await askedThenStopped("started", marker);
    await answerApproval(database().db, request.id, { allow: true, by: "person (test)" });
    // As if the first worker had begun the command when it stopped.
    await database().db.execute(
      sql`update approvals set started_at = now() where id = ${request.id}`,
    );
    const result = await finish(agent.id, options);
    expect(result).toMatchObject({ error: { code: "INTERNAL" } });
    expect(() => readFileSync(marker)).toThrow();
  });
});
