// The parsed policy end to end (issue 28, item 2): the README's kind of policy, run with
// `--approve none` (an asked call is refused), against the crafted commands through the
// real runtime — in-process scheduler, fake model over real HTTP, real Postgres, real bash. No
// file appears outside the working directory and the denied `rm` removes nothing. Then "allow for
// the tree" releases the pending requests its rule covers, and refuses to store a rule for a
// command that hides what it runs.
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerApproval, listPending } from "../../src/approvals/approvals.js";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { isAgentError } from "../../src/agents/errors.js";
import type { ApproveMode } from "../../src/policy/policy.js";
import { startScheduler, type Scheduler } from "../../src/runtime/scheduler.js";
import { useTestDatabase } from "../support/db.js";
import { useFakeRuntime } from "../support/fake-runtime.js";
import { until as untilWithin } from "../support/until.js";
import { after } from "../runtime/e2e-support.js";

const database = useTestDatabase();
const runtime = useFakeRuntime(database);
let scheduler: Scheduler;
const workdir = mkdtempSync(path.join(os.tmpdir(), "warren-policy-cwd-"));
const elsewhere = mkdtempSync(path.join(os.tmpdir(), "warren-policy-elsewhere-"));

beforeAll(async () => {
  const config = runtime.config({
    policy: { bash: { allow: ["git log *", "npm test*", "ls *", "echo *"], deny: ["rm -rf *"] } },
  });
  scheduler = await startScheduler(runtime.deps(config), {
    concurrency: 2,
    leaseSeconds: 10,
    pollMs: 200,
  });
});
afterAll(async () => {
  await scheduler.stop();
});

/** A call through the real runtime and bash: 30 s under load. */
const until = <T>(what: string, probe: () => Promise<T | undefined | false>) =>
  untilWithin(what, probe, 30_000);

async function resultOf(agentId: string): Promise<string> {
  return until("the call's result", async () => {
    const rows = await database().db.execute<{ content: string }>(
      sql`select content from events where agent_id = ${agentId} and kind = 'tool_result'
           order by id limit 1`,
    );
    return rows.rows[0]?.content;
  });
}

/** A root named `name` that runs `command` in bash in `workdir`, then answers "done". */
async function running(name: string, command: string, approve: ApproveMode) {
  runtime.fake().script([
    { agent: name, reply: { toolCalls: [{ name: "bash", arguments: { command } }] } },
    { agent: name, match: after("bash"), reply: { text: "done" } },
  ]);
  return createTree(database().db, { name, prompt: "go", cwd: workdir, approve });
}

describe("the issue's crafted commands under --approve none", () => {
  const out = (file: string) => path.join(elsewhere, file);
  const crafted: [string, string][] = [
    ["subst", `git log $(touch ${out("subst")})`],
    ["backtick", `git log \`touch ${out("backtick")}\``],
    ["redirect", `echo hi > ${out("redirect")}`],
    ["procsubst", `ls <(touch ${out("procsubst")})`],
    ["shell", `echo hi; bash -c 'touch ${out("shell")}'`],
    ["pipe", `echo touch ${out("pipe")} | sh`],
    ["xargs", `echo ${out("xargs")} | xargs touch`],
    ["env", `env touch ${out("env")}`],
    ["assign", `PATH=/usr/bin:/bin ls > ${out("assign")}`],
    ["heredoc", `sh <<EOF\ntouch ${out("heredoc")}\nEOF`],
  ];

  it.each(crafted)("%s is refused and creates nothing outside cwd", async (name, command) => {
    const agent = await running(`crafted-${name}`, command, "none");
    const result = JSON.parse(await resultOf(agent.id)) as { error?: { code: string } };
    expect(result.error?.code).toBe("NOT_ALLOWED");
    expect(existsSync(out(name))).toBe(false);
  });

  it("deny patterns hold against the path, whitespace and compound variants", async () => {
    for (const [i, command] of [
      "/bin/rm -rf keep1",
      "rm  -rf keep2",
      "echo x; rm -rf keep3",
      "\\rm -rf keep4",
    ].entries()) {
      const keep = path.join(workdir, `keep${i + 1}`);
      mkdirSync(keep, { recursive: true });
      const agent = await running(`deny-${i}`, command, "all");
      const result = JSON.parse(await resultOf(agent.id)) as { error?: { message: string } };
      expect(result.error?.message).toContain("denied by the tool policy");
      expect(existsSync(keep)).toBe(true);
    }
  });

  it("what the patterns allow still runs unasked", async () => {
    const agent = await running("allowed", "echo fine && ls > /dev/null", "none");
    expect(JSON.parse(await resultOf(agent.id))).toMatchObject({ exit_code: 0 });
  });
});

describe("allow for the tree", () => {
  async function pendingOf(agentId: string) {
    return until("the approval request", async () =>
      (await listPending(database().db)).find((p) => p.agent_id === agentId),
    );
  }

  it("stores the narrowest rule and releases the pending requests it covers", async () => {
    const first = await running("tree-first", "git status", "ask");
    const request = await pendingOf(first.id);
    expect(request.pattern).toBe("git status *");
    // Another agent of the same tree asks for a command the rule will cover, one it will not.
    runtime.fake().script([
      {
        agent: "tree-second",
        reply: { toolCalls: [{ name: "bash", arguments: { command: "git status --short" } }] },
      },
      { agent: "tree-second", match: after("bash"), reply: { text: "done" } },
      {
        agent: "tree-third",
        reply: { toolCalls: [{ name: "bash", arguments: { command: "git status; git push" } }] },
      },
      { agent: "tree-third", match: after("bash"), reply: { text: "done" } },
    ]);
    const second = await createChild("tree-second", first.id);
    const third = await createChild("tree-third", first.id);
    const covered = await pendingOf(second.id);
    const uncovered = await pendingOf(third.id);

    const answered = await answerApproval(database().db, request.id, {
      allow: true,
      scope: "tree",
      by: "person (test)",
    });
    expect(answered.pattern).toBe("git status *");
    // It ran (git says this is no repository: exit 128), it was not refused.
    expect(JSON.parse(await resultOf(second.id))).toHaveProperty("exit_code");
    const pending = (await listPending(database().db)).map((p) => p.id);
    expect(pending).not.toContain(covered.id);
    expect(pending).toContain(uncovered.id);
    await answerApproval(database().db, uncovered.id, { allow: false, by: "person (test)" });
  });

  it("offers no rule for a command that hides what it runs", async () => {
    const agent = await running("opaque", "git status $(touch x)", "ask");
    const request = await pendingOf(agent.id);
    expect(request.pattern).toBe("");
    const tree = answerApproval(database().db, request.id, {
      allow: true,
      scope: "tree",
      by: "person (test)",
    });
    await expect(tree).rejects.toSatisfy(
      (err) => isAgentError(err) && /can only be allowed once/.test(err.message),
    );
    await answerApproval(database().db, request.id, { allow: false, by: "person (test)" });
  });
});

/** A child of `parentId` in its tree, running at once (as a fork makes it). */
async function createChild(name: string, parentId: string) {
  return forkAgent(database().db, parentId, { name, prompt: "go", cwd: workdir });
}
