// What a prompt may use of an instruction or agent file (config/accepted-files.ts): the content
// recorded at the person's first start in a place, or a change they accepted; which writes are to
// such files (runtime/guarded-files.ts); and the diff a person is shown (text/line-diff.ts).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  acceptAtStart,
  acceptContent,
  acceptRequested,
  changeArguments,
  viewOf,
} from "../../src/config/accepted-files.js";
import { guardedWriteTarget } from "../../src/runtime/guarded-files.js";
import { lineDiff } from "../../src/text/line-diff.js";

let base: string;
let env: Record<string, string>;
let project: string;
beforeEach(() => {
  base = mkdtempSync(path.join(os.tmpdir(), "warren-accepted-"));
  project = path.join(base, "proj");
  mkdirSync(project);
  env = { HOME: path.join(base, "home"), WARREN_HOME: path.join(base, "data") };
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const file = (name: string) => path.join(project, name);

describe("the accepted view of a file", () => {
  it("before any start: used as it is; after the first start: only as recorded", () => {
    writeFileSync(file("AGENTS.md"), "mine");
    expect(viewOf(file("AGENTS.md"), "mine", "instructions", env)).toEqual({ use: "mine" });
    acceptAtStart([project], [file("AGENTS.md"), file("CLAUDE.md")], env);
    expect(viewOf(file("AGENTS.md"), "mine", "instructions", env)).toEqual({ use: "mine" });
    // Changed: the accepted content is used, the change reported.
    expect(viewOf(file("AGENTS.md"), "evil", "instructions", env)).toEqual({
      use: "mine",
      change: {
        file: file("AGENTS.md"),
        kind: "instructions",
        accepted: "mine",
        now: "evil",
        sha256: expect.any(String) as string,
      },
    });
    // Deleted: still the accepted content. New (recorded absent, or never recorded): nothing.
    expect(viewOf(file("AGENTS.md"), null, "instructions", env).use).toBe("mine");
    expect(viewOf(file("CLAUDE.md"), "new", "instructions", env).use).toBeNull();
    expect(viewOf(file("sub/AGENTS.md"), "new", "instructions", env).use).toBeNull();
    expect(viewOf(file("sub/AGENTS.md"), null, "instructions", env)).toEqual({ use: null });
    // Accepted content elsewhere counts (a worktree's checkout).
    expect(viewOf(file(".warren/worktrees/a/AGENTS.md"), "mine", "instructions", env)).toEqual({
      use: "mine",
    });
  });

  it("a second start in a known place accepts nothing; an accepted request takes its content", () => {
    writeFileSync(file("AGENTS.md"), "mine");
    acceptAtStart([project], [file("AGENTS.md")], env);
    writeFileSync(file("AGENTS.md"), "evil");
    acceptAtStart([project], [file("AGENTS.md")], env);
    const view = viewOf(file("AGENTS.md"), "evil", "instructions", env);
    expect(view.use).toBe("mine");
    acceptRequested(changeArguments(view.change!), env);
    expect(viewOf(file("AGENTS.md"), "evil", "instructions", env)).toEqual({ use: "evil" });
    // What was accepted is the content shown, not what the file holds later.
    expect(viewOf(file("AGENTS.md"), "worse", "instructions", env).use).toBe("evil");
    acceptContent(file("AGENTS.md"), null, env);
    expect(viewOf(file("AGENTS.md"), null, "instructions", env)).toEqual({ use: null });
  });
});

describe("writes to instruction and agent files", () => {
  it("are found by name, folder, and through a symlink; other writes are not", () => {
    const cwd = project;
    const cases: [string, unknown, boolean][] = [
      ["write_file", { path: "AGENTS.md" }, true],
      ["edit_file", { path: "pkg/claude.md" }, true],
      ["write_file", { path: "x/../.warren/agents/a.md" }, true],
      ["write_file", { path: ".Claude/Agents/b.md" }, true],
      ["write_file", { path: ".claude/skills/s/SKILL.md" }, true],
      ["write_file", { path: path.join(base, "config", "warren", "agents", "c.md") }, true],
      ["write_file", { path: "notes.md" }, false],
      ["write_file", { path: ".warren/agents" }, false],
      ["read_file", { path: "AGENTS.md" }, false],
      ["bash", { command: "echo > AGENTS.md" }, false],
    ];
    const guardedEnv = { ...env, XDG_CONFIG_HOME: path.join(base, "config") };
    for (const [tool, args, guarded] of cases) {
      expect([tool, args, guardedWriteTarget(tool, args, cwd, guardedEnv) !== undefined]).toEqual([
        tool,
        args,
        guarded,
      ]);
    }
    writeFileSync(file("AGENTS.md"), "mine");
    symlinkSync(file("AGENTS.md"), file("innocent.txt"));
    expect(guardedWriteTarget("write_file", { path: "innocent.txt" }, cwd, guardedEnv)).toBe(
      file("AGENTS.md"),
    );
  });
});

describe("the diff a person is shown", () => {
  it("marks removed and added lines with two lines of context and elides the rest", () => {
    const before = ["a", "b", "c", "d", "e", "f", "g"].join("\n");
    const after = ["a", "b", "c", "D", "e", "f", "g", "h"].join("\n");
    expect(lineDiff(before, after)).toEqual([
      "  … 1 unchanged line",
      "  b",
      "  c",
      "- d",
      "+ D",
      "  e",
      "  f",
      "  g",
      "+ h",
    ]);
    expect(lineDiff(null, "new\n")).toEqual(["+ new"]);
    expect(lineDiff("gone\n", null)).toEqual(["- gone"]);
    expect(lineDiff("", "x\n".repeat(100), 3)).toEqual([
      "+ x",
      "+ x",
      "+ x",
      "  … 97 more diff lines",
    ]);
  });
});
