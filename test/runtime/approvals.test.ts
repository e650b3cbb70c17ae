// Approvals (SPEC §3): a call the policy marks `ask` records a request and blocks like a wait
// until a person answers — allow once, allow the pattern for the tree, deny with a reason the
// model reads; the first answer wins; `--approve all|none` answer for the tree; `deny` in the
// policy is NOT_ALLOWED. In-process scheduler, fake model over real HTTP, real Postgres.
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerApproval, listPending } from "../../src/approvals/approvals.js";
import { createTree } from "../../src/agents/tree.js";
import { isAgentError } from "../../src/agents/errors.js";
import type { ApproveMode } from "../../src/policy/policy.js";
import { interruptAgent } from "../../src/runtime/interrupt.js";
import { startScheduler, type Scheduler } from "../../src/runtime/scheduler.js";
import { useTestDatabase } from "../support/db.js";
import { useFakeRuntime } from "../support/fake-runtime.js";
import { until } from "../support/until.js";
import { after } from "./e2e-support.js";

const database = useTestDatabase();
const runtime = useFakeRuntime(database);
let scheduler: Scheduler;
const workdir = mkdtempSync(path.join(os.tmpdir(), "warren-approvals-"));

beforeAll(async () => {
  const config = runtime.config({ policy: { bash: { deny: ["rm *"], ask: ["*"] } } });
  scheduler = await startScheduler(runtime.deps(config), {
    concurrency: 1,
    leaseSeconds: 10,
    pollMs: 200,
  });
});
afterAll(async () => {
  await scheduler.stop();
});

async function events(agentId: string) {
  const rows = await database().db.execute<{ kind: string; content: string }>(
    sql`select kind, content from events where agent_id = ${agentId} order by id`,
  );
  return rows.rows;
}

async function resultOf(agentId: string): Promise<string> {
  return until(
    "the call's result",
    async () => (await events(agentId)).find((e) => e.kind === "tool_result")?.content,
  );
}

async function state(agentId: string): Promise<string> {
  const rows = await database().db.execute<{ state: string }>(
    sql`select state from agents where id = ${agentId}`,
  );
  return rows.rows[0]!.state;
}

/** A root named `name` that runs `command` in bash, then answers "done". */
async function asking(name: string, command: string, approve: ApproveMode = "ask") {
  runtime.fake().script([
    { agent: name, reply: { toolCalls: [{ name: "bash", arguments: { command } }] } },
    { agent: name, match: after("bash"), reply: { text: "done" } },
  ]);
  return createTree(database().db, { name, prompt: "go", cwd: workdir, approve });
}

async function pendingOf(agentId: string) {
  return until("the approval request", async () =>
    (await listPending(database().db)).find((p) => p.agent_id === agentId),
  );
}

describe("a call the policy marks ask", () => {
  it("waits for a person without holding a slot, then runs once allowed", async () => {
    const marker = path.join(workdir, "ran-1");
    const agent = await asking("asker", `echo hi > ${marker}`);
    const request = await pendingOf(agent.id);
    expect(request).toMatchObject({ tool: "bash", subject: `echo hi > ${marker}` });
    // The request commits first, the agent's `waiting` in the gate's next statement.
    await until("the agent to wait", async () => (await state(agent.id)) === "waiting");
    // concurrency 1: another agent runs while this one waits for its answer.
    runtime.fake().script({ agent: "bystander", reply: { text: "meanwhile" } });
    const other = await createTree(database().db, { name: "bystander", prompt: "hi" });
    await until("the bystander to finish", async () => (await state(other.id)) === "idle");
    expect(() => readFileSync(marker)).toThrow();

    await answerApproval(database().db, request.id, { allow: true, by: "person (test)" });
    expect(JSON.parse(await resultOf(agent.id))).toMatchObject({ exit_code: 0 });
    expect(readFileSync(marker, "utf8")).toBe("hi\n");
    await until("the turn to end", async () => (await state(agent.id)) === "idle");
    const shown = (await events(agent.id)).find((e) => e.kind === "system");
    expect(shown?.content).toContain(`approval ${request.id} allowed once by person (test)`);
  });

  it("is refused with the person's reason; a second answer loses", async () => {
    const agent = await asking("denied", "echo never");
    const request = await pendingOf(agent.id);
    await answerApproval(database().db, request.id, {
      allow: false,
      reason: "not on my machine",
      by: "person (tui)",
    });
    const late = answerApproval(database().db, request.id, { allow: true, by: "person (cli)" });
    await expect(late).rejects.toSatisfy(
      (err) => isAgentError(err) && /already denied by person \(tui\)/.test(err.message),
    );
    const result = JSON.parse(await resultOf(agent.id)) as {
      error: { code: string; message: string };
    };
    expect(result.error.code).toBe("NOT_ALLOWED");
    expect(result.error.message).toContain("not on my machine");
  });

  it("allowed for the tree, later calls like it run unasked", async () => {
    const first = await asking("tree-a", "echo one");
    const request = await pendingOf(first.id);
    await answerApproval(database().db, request.id, {
      allow: true,
      scope: "tree",
      by: "person (test)",
    });
    await resultOf(first.id);
    await until("the turn to end", async () => (await state(first.id)) === "idle");
    // The same tree asks again: the rule stored is `echo one *`, which covers this call.
    runtime.fake().script([
      {
        agent: "tree-a",
        reply: { toolCalls: [{ name: "bash", arguments: { command: "echo one more" } }] },
      },
      { agent: "tree-a", match: after("bash"), reply: { text: "done again" } },
    ]);
    await database().db.execute(sql`
      insert into events (agent_id, kind, content) values (${first.id}, 'user', 'again')`);
    await database().db.execute(sql`update agents set state = 'running' where id = ${first.id}`);
    await database().db.execute(sql`select pg_notify('warren_work', ${first.id})`);
    await until("the second answer", async () =>
      (await events(first.id)).some((e) => e.kind === "assistant" && e.content === "done again"),
    );
    expect((await listPending(database().db)).filter((p) => p.agent_id === first.id)).toEqual([]);
  });

  it("--approve none answers no at once; all runs unasked; a denied pattern never asks", async () => {
    const none = await asking("headless-none", "echo x", "none");
    expect(JSON.parse(await resultOf(none.id)).error.message).toContain("--approve none");
    const all = await asking("headless-all", "echo y", "all");
    expect(JSON.parse(await resultOf(all.id))).toMatchObject({ exit_code: 0 });
    const rm = await asking("remover", "rm -rf nothing-here");
    expect(JSON.parse(await resultOf(rm.id)).error).toMatchObject({ code: "NOT_ALLOWED" });
    expect((await listPending(database().db)).map((p) => p.agent_id)).not.toContain(rm.id);
  });

  it("an interrupt withdraws the request", async () => {
    const agent = await asking("withdrawn", "echo later");
    const request = await pendingOf(agent.id);
    await interruptAgent(database().db, agent.id);
    await until("the agent to go idle", async () => (await state(agent.id)) === "idle");
    expect((await listPending(database().db)).map((p) => p.id)).not.toContain(request.id);
    const late = answerApproval(database().db, request.id, { allow: true, by: "person" });
    await expect(late).rejects.toSatisfy(isAgentError);
  });
});
