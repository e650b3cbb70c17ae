// The README's worked example of parallel work, run for real in a terminal (tmux): an orchestrator
// plans three tasks on the board (the third depends on the first two), forks two workers, each in
// a git worktree of its own, that claim tasks until the board is empty; then the person reads the
// board with /tasks and merges both branches with /merge. With WARREN_EXAMPLE_CAPTURES=FILE the
// screens are written to FILE: the README's captures come from this test.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { RecordedRequest, Reply } from "../support/fake-model.js";
import { warrenEnv } from "../support/warren.js";
import { after, forkedIds, isFirst, lastToolResults } from "../runtime/e2e-support.js";
import { startTerminal } from "./tmux.js";
import { useTuiSuite } from "./tui-suite.js";

const { database, model, terminals } = useTuiSuite();

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

function repository(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-example-")));
  git(dir, "init", "-q", "-b", "main");
  git(dir, "config", "user.email", "person@example.com");
  git(dir, "config", "user.name", "A Person");
  fs.writeFileSync(path.join(dir, "README.md"), "# shop\n");
  git(dir, "add", ".");
  git(dir, "commit", "-q", "-m", "start");
  return dir;
}

/** The task a worker's request last claimed, from its task_claim results. */
function lastClaim(req: RecordedRequest): { task_id?: string; title?: string; status?: string } {
  for (const message of [...req.messages].reverse()) {
    if (message.role !== "tool") continue;
    const value = JSON.parse(message.content ?? "null") as Record<string, unknown> | null;
    if (value && ("task_id" in value || "status" in value) && !("state" in value)) return value;
  }
  return {};
}

/** A worker: claim, write the task's file, finish it, claim again; report once the board is empty. */
function worker(req: RecordedRequest): Reply {
  const last = lastToolResults(req).at(-1);
  const claim = () => ({ toolCalls: [{ name: "task_claim", arguments: { timeout: 60 } }] });
  if (!last || last.name === "task_done") return claim();
  if (last.name === "task_claim") {
    const task = lastClaim(req);
    if (task.status === "empty") {
      return { toolCalls: [{ name: "send", arguments: { to: "parent", message: "board empty" } }] };
    }
    const file = `${task.title!.replace(/\W+/g, "-")}.md`;
    return {
      toolCalls: [
        { name: "write_file", arguments: { path: file, content: `# ${task.title}\n\ndone\n` } },
      ],
    };
  }
  if (last.name === "write_file") {
    const task = lastClaim(req);
    const args = { task_id: task.task_id, result: `wrote ${task.title!.replace(/\W+/g, "-")}.md` };
    return { toolCalls: [{ name: "task_done", arguments: args }] };
  }
  return { text: "done" };
}

describe("parallel work, the README's example", { retry: 1 }, () => {
  it("plans on the board, works in two worktrees, and merges both branches", async () => {
    const dir = repository();
    const fork = (name: string) => ({
      name: "fork",
      arguments: {
        name,
        prompt: "Claim tasks from the board until it is empty; write each task's file.",
        isolation: "worktree",
        context: "fresh",
      },
    });
    model().script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "task_add", arguments: { title: "pricing page" } },
            { name: "task_add", arguments: { title: "checkout form" } },
          ],
        },
      },
      {
        agent: "root",
        match: after("task_add"),
        reply: (req) => ({
          toolCalls: [
            {
              name: "task_add",
              arguments: {
                title: "release notes",
                depends_on: lastToolResults(req).map(
                  (r) => (r.value as { task_id: string }).task_id,
                ),
              },
            },
            fork("w1"),
            fork("w2"),
          ],
        }),
      },
      {
        agent: "root",
        match: after("fork"),
        reply: (req) => ({
          toolCalls: [
            {
              name: "wait",
              arguments: { timeout: 120, from_agents: Object.values(forkedIds(req)) },
            },
          ],
        }),
      },
      {
        agent: "root",
        match: after("wait"),
        reply: { text: "All three tasks are done; merge w1 and w2 when you like." },
      },
      { agent: "w1", reply: worker, times: Infinity, label: "w1" },
      { agent: "w2", reply: worker, times: Infinity, label: "w2" },
    ]);
    const env = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
    const t = await startTerminal({ env, args: ["--new"], width: 100, height: 30, cwd: dir });
    terminals.push(t);
    const captures: string[] = [];
    const keep = (title: string, screen: string) =>
      captures.push(`## ${title}\n\n${screen.replace(/\s+$/gm, "").trimEnd()}\n`);

    await t.waitFor(/\[root [0-9a-f]{8}\]/);
    await t.type("Build the pricing page and the checkout form, then write the release notes.");
    await t.keys("Enter");
    keep("the root's wait", await t.waitFor(/merge w1 and w2 when you like/, 60_000));
    await t.waitFor("tasks 3/3");

    await t.type("/tasks");
    await t.keys("Enter");
    const board = await t.waitFor(/done\s+[0-9a-f]{8} release notes/);
    keep("/tasks", board);
    expect(board).toContain("3 tasks: 3 done");
    await t.keys("Escape");
    await t.waitFor((screen) => !screen.includes("tasks — "));

    for (const name of ["w1", "w2"]) {
      await t.type(`/merge ${name}`);
      await t.keys("Enter");
      keep(`/merge ${name}`, await t.waitFor(new RegExp(`merged warren/${name}-`)));
    }
    // Both branches are in the person's tree: every task's file, and nothing lost.
    const files = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(".md"))
      .sort();
    expect(files).toEqual(["README.md", "checkout-form.md", "pricing-page.md", "release-notes.md"]);
    expect(git(dir, "status", "--porcelain")).toBe("");
    model().assertAllUsed();

    const out = process.env.WARREN_EXAMPLE_CAPTURES;
    if (out) fs.writeFileSync(out, captures.join("\n"));
  });
});
