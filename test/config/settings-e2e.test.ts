// Claude Code's settings files end to end through `bin/warren -p` (needs `npm run build`) and the
// fake model server: a project's deny stops a call under `--approve all` (the file stays); a cloned
// project's allow rules, env and hooks do nothing until `warren trust`, apply after it, and wait
// again once the file changes.
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { after, isFirst, lastToolResults, requestsOf, useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();

function project() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "warren-settings-e2e-"));
  const work = path.join(dir, "clone");
  mkdirSync(path.join(work, ".git"), { recursive: true });
  mkdirSync(path.join(work, ".claude"), { recursive: true });
  const home = path.join(dir, "home");
  mkdirSync(home, { recursive: true });
  const settings = (value: unknown) =>
    writeFileSync(path.join(work, ".claude", "settings.json"), JSON.stringify(value));
  // One home and one warren home for every run (what is trusted is remembered there).
  const env = { HOME: home, WARREN_HOME: path.join(dir, "warren-home") };
  return { work, env, settings };
}

describe("Claude Code's settings, end to end", () => {
  it("a settings deny `Bash(rm:*)` stops `rm -f x` under --approve all; the file stays", async () => {
    const { work, env, settings } = project();
    settings({ permissions: { deny: ["Bash(rm:*)"] } });
    writeFileSync(path.join(work, "x"), "keep me");
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: { toolCalls: [{ name: "bash", arguments: { command: "rm -f x" } }] },
      },
      { agent: "root", match: after("bash"), reply: { text: "tried" } },
    ]);
    const run = await e2e.prompt("remove x", {
      cwd: work,
      env: { ...env, WARREN_APPROVE: "all" },
    });
    expect(run.json?.text, run.stderr).toBe("tried");
    const [, second] = requestsOf(e2e.fake(), "root");
    const result = lastToolResults(second!)[0]!.value as {
      error?: { code: string; message: string };
    };
    expect(result.error?.code).toBe("NOT_ALLOWED");
    expect(result.error?.message).toContain("denied by the tool policy");
    expect(existsSync(path.join(work, "x"))).toBe(true);
    // Nothing waits: a file of denies needs no trust.
    expect(run.stderr).not.toContain("warren trust");
  }, 120_000);

  it("a cloned project's allow, env and hook apply only after `warren trust`; a changed file waits again", async () => {
    const { work, env, settings } = project();
    const content = {
      permissions: { allow: ["Bash(printenv:*)"] },
      env: { GREETING: "hello-from-settings" },
      hooks: {
        PreToolUse: [
          {
            matcher: "Glob",
            hooks: [{ type: "command", command: "echo 'project hook says no' >&2; exit 2" }],
          },
        ],
      },
    };
    settings(content);
    // --approve none: an asked call is refused, so only the allow rule lets bash run.
    const runEnv = { ...env, WARREN_APPROVE: "none" };
    const go = async () => {
      e2e.fake().script([
        {
          agent: "root",
          match: isFirst,
          reply: {
            toolCalls: [
              { name: "bash", arguments: { command: "printenv GREETING" } },
              { name: "glob", arguments: { pattern: "*" } },
            ],
          },
        },
        { agent: "root", match: after("glob"), reply: { text: "done" } },
      ]);
      const run = await e2e.prompt("go", { cwd: work, env: runEnv });
      expect(run.json?.text, run.stderr).toBe("done");
      const last = requestsOf(e2e.fake(), "root").at(-1)!;
      const results = lastToolResults(last);
      const of = (name: string) => JSON.stringify(results.find((r) => r.name === name)?.value);
      return { run, bash: of("bash"), glob: of("glob") };
    };

    const before = await go();
    expect(before.bash).toContain("NOT_ALLOWED");
    expect(before.bash).toContain("--approve none");
    expect(before.glob).not.toContain("project hook says no");
    expect(before.run.stderr).toContain(
      `waiting for \`warren trust\`: ${path.join(work, ".claude", "settings.json")} (1 allow rule, env, hooks)`,
    );

    const trusted = await e2e.warren(["trust"], env, work);
    expect(trusted.stderr).toBe("");
    expect(trusted.code).toBe(0);
    expect(trusted.stdout).toContain(`trusting ${path.join(work, ".claude", "settings.json")}:`);
    expect(trusted.stdout).toContain("allow Bash(printenv:*)");
    expect(trusted.stdout).toContain("env   GREETING");
    expect(trusted.stdout).toContain("hook  PreToolUse (Glob):");

    const afterTrust = await go();
    expect(afterTrust.run.stderr).not.toContain("warren trust");
    expect(afterTrust.bash).toContain("hello-from-settings");
    expect(afterTrust.glob).toContain("project hook says no");

    const listed = await e2e.warren(["trust", "--list"], env, work);
    expect(listed.stdout).toContain(path.join(work, ".claude", "settings.json"));

    // The file changes: everything it widens waits again.
    settings({ ...content, env: { GREETING: "changed" } });
    const changed = await go();
    expect(changed.run.stderr).toContain("waiting for `warren trust`");
    expect(changed.bash).toContain("NOT_ALLOWED");
    expect(changed.glob).not.toContain("project hook says no");
  }, 240_000);

  it("an agent file's `model: sonnet` runs on the parent's model without an alias, on the alias's model with one", async () => {
    const { work, env } = project();
    mkdirSync(path.join(work, ".claude", "agents"), { recursive: true });
    writeFileSync(
      path.join(work, ".claude", "agents", "reviewer.md"),
      "---\nname: reviewer\ndescription: reviews\nmodel: sonnet\n---\nReview.\n",
    );
    const go = async (config: Record<string, unknown>) => {
      e2e.fake().script([
        {
          agent: "root",
          match: isFirst,
          reply: {
            toolCalls: [
              { name: "fork", arguments: { name: "rev", prompt: "look", profile: "reviewer" } },
            ],
          },
        },
        {
          agent: "root",
          match: after("fork"),
          reply: {
            toolCalls: [{ name: "wait", arguments: { timeout: 30, from_agents: ["rev"] } }],
          },
        },
        { agent: "root", match: after("wait"), reply: { text: "reviewed" } },
        { agent: "rev", match: isFirst, reply: { text: "looks fine" } },
      ]);
      const run = await e2e.prompt("review", { cwd: work, env, config });
      expect(run.json?.text, run.stderr).toBe("reviewed");
      // The fake serves both runs: this run's child request is the last.
      return { run, model: requestsOf(e2e.fake(), "rev").at(-1)!.model };
    };
    const bare = await go({});
    expect(bare.model).toBe("fake-model");
    const warned = bare.run.stderr.split("\n").filter((l) => l.includes('model "sonnet"'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain("model_aliases");

    const mapped = await go({ model_aliases: { sonnet: "fake-sonnet" } });
    expect(mapped.model).toBe("fake-sonnet");
    expect(mapped.run.stderr).not.toContain('model "sonnet"');
  }, 120_000);
});
