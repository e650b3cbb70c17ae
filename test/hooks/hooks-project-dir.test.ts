// `$CLAUDE_PROJECT_DIR` is the project's root, not the agent's working directory (SPEC §9), so a
// hook copied from Claude Code (`"$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh`) is found when warren
// starts in a subfolder; and a PreToolUse guard that cannot run (missing, not executable) blocks
// the call it guards and says why, end to end through `bin/warren -p`.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { projectDir } from "../../src/hooks/config.js";
import { after, isFirst, lastToolResults, requestsOf, useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();

let repo: string;
let sub: string;
beforeEach(() => {
  repo = mkdtempSync(path.join(os.tmpdir(), "warren-hooks-project-"));
  mkdirSync(path.join(repo, ".git"));
  mkdirSync(path.join(repo, ".claude", "hooks"), { recursive: true });
  sub = path.join(repo, "packages", "app");
  mkdirSync(sub, { recursive: true });
});
afterEach(() => rmSync(repo, { recursive: true, force: true }));

function hookScript(name: string, body: string, mode = 0o755): void {
  const file = path.join(repo, ".claude", "hooks", name);
  writeFileSync(file, `#!/usr/bin/env bash\n${body}\n`);
  chmodSync(file, mode);
}

const preBash = (command: string) => ({
  hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command }] }] },
});

function bashOnce(command: string): void {
  e2e.fake().script([
    {
      agent: "root",
      match: isFirst,
      reply: { toolCalls: [{ name: "bash", arguments: { command } }] },
    },
    { agent: "root", match: after("bash"), reply: { text: "done" } },
  ]);
}

function bashResult(): unknown {
  const last = requestsOf(e2e.fake(), "root").at(-1)!;
  return lastToolResults(last).find((r) => r.name === "bash")?.value;
}

describe("projectDir", () => {
  it("is the repository root from a subfolder, else where warren started", () => {
    expect(projectDir(sub)).toBe(repo);
    const loose = mkdtempSync(path.join(os.tmpdir(), "warren-no-repo-"));
    mkdirSync(path.join(loose, "inner"));
    expect(projectDir(path.join(loose, "inner"), loose)).toBe(loose);
  });
});

describe("hooks started from a subfolder of the project", () => {
  it('"$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh is found and sees the project root', async () => {
    hookScript(
      "guard.sh",
      `printf '%s' "$CLAUDE_PROJECT_DIR" > seen.txt; echo "no rm here" >&2; exit 2`,
    );
    bashOnce("touch ran.txt");
    const run = await e2e.prompt("go", {
      cwd: sub,
      config: preBash('"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh'),
    });
    expect(run.stderr).toBe("");
    expect(run.json?.text).toBe("done");
    expect(readFileSync(path.join(sub, "seen.txt"), "utf8")).toBe(repo);
    expect(bashResult()).toMatchObject({ error: { code: "NOT_ALLOWED" } });
    expect(JSON.stringify(bashResult())).toContain("no rm here");
    expect(existsSync(path.join(sub, "ran.txt"))).toBe(false);
  });

  it("a guard that is not there blocks the call and says why", async () => {
    bashOnce("touch ran.txt");
    const run = await e2e.prompt("go", {
      cwd: sub,
      config: preBash('"$CLAUDE_PROJECT_DIR"/.claude/hooks/missing.sh'),
    });
    expect(run.json?.text).toBe("done");
    expect(existsSync(path.join(sub, "ran.txt"))).toBe(false);
    expect(JSON.stringify(bashResult())).toContain("a hook guarding this call could not run");
    expect(run.stderr).toMatch(
      /hook PreToolUse .*missing\.sh.* could not run \(exit code 127.*the call it guards is blocked/,
    );
  });

  it("a guard that is not executable blocks the call and says why", async () => {
    hookScript("noexec.sh", "exit 0", 0o644);
    bashOnce("touch ran.txt");
    const run = await e2e.prompt("go", {
      cwd: sub,
      config: preBash('"$CLAUDE_PROJECT_DIR"/.claude/hooks/noexec.sh'),
    });
    expect(run.json?.text).toBe("done");
    expect(existsSync(path.join(sub, "ran.txt"))).toBe(false);
    expect(JSON.stringify(bashResult())).toContain("a hook guarding this call could not run");
    expect(run.stderr).toMatch(
      /could not run \(exit code 126.*Permission denied.*the call it guards is blocked/,
    );
  });
});
