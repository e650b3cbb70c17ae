// What hooks do across a worker that goes away (docs/hooks.md, "Crashes and repeats"): a call
// waiting for approval is asked again by the next worker, so its PreToolUse and its Notification
// run again; the call itself, once allowed, runs once, and its PostToolUse with it.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
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
import { after } from "../runtime/e2e-support.js";

const database = useTestDatabase();
const runtime = useFakeRuntime(database);
const workdir = mkdtempSync(path.join(os.tmpdir(), "warren-hooks-resume-"));

/** A hook that appends its event's name to `log` in the working directory. */
function logger(name: string): string {
  // In .claude/hooks/, read-only to agents: anywhere else in the working directory it is refused.
  mkdirSync(path.join(workdir, ".claude", "hooks"), { recursive: true });
  const file = path.join(workdir, ".claude", "hooks", name);
  writeFileSync(file, `#!/usr/bin/env bash\ncat > /dev/null; echo ${name} >> hooks.log\n`);
  chmodSync(file, 0o755);
  return file;
}

describe("hooks across a worker that went away", () => {
  it("PreToolUse and Notification run again for the re-asked call; the call and PostToolUse once", async () => {
    const group = (command: string) => [{ hooks: [{ type: "command", command }] }];
    const config = runtime.config(
      {
        hooks: {
          PreToolUse: group(logger("pre")),
          PostToolUse: group(logger("post")),
          Notification: group(logger("notification")),
        },
      },
      workdir,
    );
    const deps = () => runtime.deps(config);
    runtime.fake().script([
      {
        agent: "resumed",
        reply: { toolCalls: [{ name: "bash", arguments: { command: "echo x >> ran" } }] },
      },
      { agent: "resumed", match: after("bash"), reply: { text: "done" } },
    ]);
    const agent = await createTree(database().db, {
      name: "resumed",
      prompt: "go",
      cwd: workdir,
      approve: "ask",
    });
    const options = { concurrency: 2, leaseSeconds: 10, pollMs: 200, treeId: agent.tree_id };
    const log = () => {
      try {
        return readFileSync(path.join(workdir, "hooks.log"), "utf8").split("\n").filter(Boolean);
      } catch {
        return [];
      }
    };
    const first = await startScheduler(deps(), options);
    const request = await until("the request", async () =>
      (await listPending(database().db)).find((p) => p.agent_id === agent.id),
    );
    await until("the notification", async () => log().includes("notification"));
    await first.stop(); // the worker goes away while the call waits
    expect(log()).toEqual(["pre", "notification"]);

    const second = await startScheduler(deps(), options);
    try {
      await until("the call asked again", async () => log().length === 4);
      expect(log()).toEqual(["pre", "notification", "pre", "notification"]);
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
    expect(readFileSync(path.join(workdir, "ran"), "utf8")).toBe("x\n");
    expect(log()).toEqual(["pre", "notification", "pre", "notification", "post"]);
  });
});
