// The files that configure warren are read-only inside the sandbox (issue 37, item 2): in the
// working directory, `.warren/` (but `.warren/worktrees/`), `.claude/`, `.codex/`, `.agents/`, `.mcp.json`,
// `.git/hooks`, `.git/config` and the `.git` entry itself cannot be written, removed, renamed or
// replaced by the agent's bash (each is a mount point); git still works; absent ones are not
// created as mount points in the person's tree.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { probeBwrap } from "../../src/sandbox/launch.js";
import { closeWarmSandboxes } from "../../src/sandbox/warm.js";
import { bash, makeFixture, output, settingsFrom, type Fixture } from "./fixture.js";

const hasBwrap = (await probeBwrap("bwrap")).ok;

describe.skipIf(!hasBwrap)("warren's configuration files are read-only to the agent's bash", () => {
  let fx: Fixture;
  beforeEach(() => {
    fx = makeFixture({ sandbox: "on" });
    execFileSync("git", ["init", "-q", fx.cwd]);
    writeFileSync(path.join(fx.cwd, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n", {
      mode: 0o755,
    });
    writeFileSync(path.join(fx.cwd, ".mcp.json"), '{"mcpServers":{}}\n');
    mkdirSync(path.join(fx.cwd, ".claude"), { recursive: true });
    writeFileSync(path.join(fx.cwd, ".claude", "settings.json"), "{}\n");
    mkdirSync(path.join(fx.cwd, ".codex"), { recursive: true });
    mkdirSync(path.join(fx.cwd, ".agents", "skills"), { recursive: true });
    mkdirSync(path.join(fx.cwd, ".warren", "agents"), { recursive: true });
    writeFileSync(path.join(fx.cwd, ".warren", "agents", "x.md"), "mine\n");
    mkdirSync(path.join(fx.cwd, ".warren", "worktrees", "x"), { recursive: true });
  });
  afterEach(() => {
    closeWarmSandboxes();
    fx.cleanup();
  });

  const attempts: [string, string][] = [
    ["write .mcp.json", "echo x > .mcp.json"],
    ["remove .claude", "rm -rf .claude"],
    ["write in .claude", "echo x > .claude/settings.json"],
    // A skill's description is listed in every later agent's system prompt.
    ["plant a skill", "mkdir -p .agents/skills/evil && echo x > .agents/skills/evil/SKILL.md"],
    ["replace .agents", "rm -rf .agents && mkdir -p .agents/skills"],
    ["rename .git", "mv .git .g"],
    ["plant a git hook", "echo 'touch pwned' > .git/hooks/pre-commit"],
    ["add a git hook", "echo 'touch pwned' > .git/hooks/post-checkout"],
    ["edit .git/config", "git config core.hooksPath /tmp"],
    ["rename .warren", "mv .warren .w"],
    ["shadow an agent file", "echo evil > .warren/agents/x.md"],
    ["add an agent file", "echo evil > .warren/agents/y.md"],
    ["replace .codex", "rm -rf .codex && mkdir .codex"],
    ["replace .mcp.json by a rename", "echo '{}' > n.json && mv n.json .mcp.json"],
  ];

  it.each(attempts)("refuses to %s", async (_, command) => {
    const before = {
      mcp: readFileSync(path.join(fx.cwd, ".mcp.json"), "utf8"),
      hook: readFileSync(path.join(fx.cwd, ".git", "hooks", "pre-commit"), "utf8"),
      agent: readFileSync(path.join(fx.cwd, ".warren", "agents", "x.md"), "utf8"),
      config: readFileSync(path.join(fx.cwd, ".git", "config"), "utf8"),
    };
    const result = output(await bash(command, fx.cwd, settingsFrom()));
    expect(result.exit_code, result.output).not.toBe(0);
    expect(readFileSync(path.join(fx.cwd, ".mcp.json"), "utf8")).toBe(before.mcp);
    expect(readFileSync(path.join(fx.cwd, ".git", "hooks", "pre-commit"), "utf8")).toBe(
      before.hook,
    );
    expect(readFileSync(path.join(fx.cwd, ".warren", "agents", "x.md"), "utf8")).toBe(before.agent);
    expect(readFileSync(path.join(fx.cwd, ".git", "config"), "utf8")).toBe(before.config);
    for (const kept of [".git", ".warren", ".claude", ".codex", ".agents"]) {
      expect(existsSync(path.join(fx.cwd, kept))).toBe(true);
    }
    expect(existsSync(path.join(fx.cwd, ".agents", "skills", "evil"))).toBe(false);
    expect(existsSync(path.join(fx.cwd, ".git", "hooks", "post-checkout"))).toBe(false);
    expect(existsSync(path.join(fx.cwd, ".warren", "agents", "y.md"))).toBe(false);
  });

  it("keeps .warren/worktrees/ read-only to the parent (its children write their own), and git usable", async () => {
    const result = output(
      await bash(
        "echo a > a.txt && git add a.txt && " +
          "git -c user.name=t -c user.email=t@t commit -qm a && git log --oneline | wc -l; " +
          "echo parent > .warren/worktrees/x/work.txt",
        fx.cwd,
        settingsFrom(),
      ),
    );
    expect(result.output).toMatch(/^1\n/);
    expect(result.output).toMatch(/Read-only file system/);
    const child = path.join(fx.cwd, ".warren", "worktrees", "x");
    const own = output(await bash("echo child > work.txt", child, settingsFrom()));
    expect(own.exit_code, own.output).toBe(0);
    expect(readFileSync(path.join(child, "work.txt"), "utf8")).toBe("child\n");
  });

  it("creates no mount point for an absent entry in the person's tree", async () => {
    const bare = path.join(fx.base, "bare");
    mkdirSync(bare);
    const result = output(await bash("ls -A", bare, settingsFrom()));
    expect(result.output.trim()).toBe("");
    for (const name of [".git", ".warren", ".claude", ".codex", ".agents", ".mcp.json"]) {
      expect(existsSync(path.join(bare, name))).toBe(false);
    }
  });
});
