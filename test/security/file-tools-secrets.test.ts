// Issue 37 items 2 and 5: the file tools refuse warren's secrets whatever the working directory
// and however the path is spelt (`..`, a symbolic link, a hard link, a renamed parent), grep and
// glob neither list nor read inside them, and write_file / edit_file refuse the files that
// configure warren (`.warren/` but its worktrees, `.claude/`, `.codex/`, `.mcp.json`,
// `.git/hooks/`, `.git/config`, the `.git` entry) in the working directory and at the
// repository root. Started in $HOME, the working directory holds warren's home and config.
import {
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { editFileTool } from "../../src/tools/edit-file.js";
import { globTool } from "../../src/tools/glob.js";
import { grepTool } from "../../src/tools/grep.js";
import { rememberHidden } from "../../src/tools/hidden.js";
import type { FileToolContext } from "../../src/tools/paths.js";
import { readFileTool } from "../../src/tools/read-file.js";
import type { ToolOutcome } from "../../src/tools/tool.js";
import { writeFileTool } from "../../src/tools/write-file.js";
import { isFirst, lastToolResults, requestsOf, useE2E, after } from "../runtime/e2e-support.js";
import { leaked, makeFixture, SECRET, type Fixture } from "./fixture.js";

const e2e = useE2E();

let fx: Fixture;
beforeEach(() => {
  fx = makeFixture();
  // What a started warren's file tools record when they load, before any agent ran a command.
  rememberHidden(process.env);
});
afterEach(() => fx.cleanup());

const ctx = (cwd: string, fileAccess: "cwd" | "any" = "cwd"): FileToolContext => ({
  cwd,
  signal: new AbortController().signal,
  fileAccess,
});

const read = (cwd: string, p: string, access?: "cwd" | "any") =>
  readFileTool.run({ path: p }, ctx(cwd, access));

function expectRefused(
  outcome: ToolOutcome,
  what: RegExp = /warren's own configuration or secrets/,
) {
  expect(outcome.ok, JSON.stringify(outcome)).toBe(false);
  if (outcome.ok) return;
  expect(outcome.error.code).toBe("NOT_ALLOWED");
  expect(outcome.error.message).toMatch(what);
  expect(leaked(JSON.stringify(outcome))).toEqual([]);
}

describe("the file tools never read warren's secrets, however the path is spelt", () => {
  it("from a working directory of $HOME: the password file, the config, ~/.pgpass", async () => {
    const home = fx.home;
    expectRefused(await read(home, ".local/share/warren/postgres.json"));
    expectRefused(await read(home, path.join(fx.warrenHome, "postgres.json")));
    expectRefused(await read(home, ".config/warren/config.json"));
    expectRefused(await read(home, ".pgpass"));
    // The rest of $HOME still reads.
    writeFileSync(path.join(home, "notes.txt"), "mine\n");
    expect(await read(home, "notes.txt")).toMatchObject({ ok: true });
  });

  it("through `..`, a symbolic link, a hard link", async () => {
    const home = fx.home;
    mkdirSync(path.join(home, "proj"));
    expectRefused(await read(home, "proj/../.local/share/warren/postgres.json"));
    expectRefused(await read(path.join(home, "proj"), "../.pgpass", "any"));
    symlinkSync(fx.warrenHome, path.join(home, "proj", "w"));
    expectRefused(await read(home, "proj/w/postgres.json"));
    symlinkSync(fx.configFile, path.join(home, "proj", "c.json"));
    expectRefused(await read(home, "proj/c.json"));
    linkSync(path.join(fx.warrenHome, "postgres.json"), path.join(home, "proj", "hard.json"));
    expectRefused(await read(home, "proj/hard.json"));
    linkSync(path.join(home, ".pgpass"), path.join(home, "proj", "pgpass.txt"));
    expectRefused(await read(path.join(home, "proj"), "pgpass.txt"));
    // Nor written or edited through them.
    expectRefused(await writeFileTool.run({ path: "proj/hard.json", content: "{}" }, ctx(home)));
    expectRefused(
      await editFileTool.run(
        { path: "proj/pgpass.txt", old_string: "*", new_string: "x" },
        ctx(home),
      ),
    );
    expect(readFileSync(path.join(home, ".pgpass"), "utf8")).toContain(SECRET.pgpass);
  });

  it("after a parent was renamed (mv ~/.local/share ~/.local/share-x; mv ~/.config ~/.config-x)", async () => {
    const home = fx.home;
    renameSync(path.join(home, ".local", "share"), path.join(home, ".local", "share-x"));
    renameSync(path.join(home, ".config"), path.join(home, ".config-x"));
    expectRefused(await read(home, ".local/share-x/warren/postgres.json"));
    expectRefused(await read(home, ".config-x/warren/config.json"));
    const grep = await grepTool.run({ pattern: "pw|sk-" }, ctx(home));
    expect(grep).toMatchObject({ ok: true });
    expect(leaked(JSON.stringify(grep))).toEqual([]);
  });

  it("grep and glob neither list nor read inside them", async () => {
    const home = fx.home;
    writeFileSync(
      path.join(home, "notes.json"),
      `{"mine": "${SECRET.homePassword.slice(0, 4)}"}\n`,
    );
    const found = await grepTool.run({ pattern: "pw|sk-|mine" }, ctx(home));
    expect(found).toMatchObject({ ok: true });
    expect(leaked(JSON.stringify(found))).toEqual([]);
    expect(JSON.stringify(found)).toContain("notes.json");
    const listed = await globTool.run({ pattern: "**/*" }, ctx(home));
    expect(listed).toMatchObject({ ok: true });
    const files = (listed as { value: { files: string[] } }).value.files;
    expect(files).toContain("notes.json");
    expect(files.filter((f) => /postgres\.json|pgdata|config\.json|pgpass/.test(f))).toEqual([]);
    expectRefused(await grepTool.run({ pattern: ".", path: ".local/share/warren" }, ctx(home)));
    expectRefused(await globTool.run({ pattern: ".local/share/warren/*" }, ctx(home)));
    expectRefused(await grepTool.run({ pattern: ".", path: ".pgpass" }, ctx(home)));
  });

  it("end to end: `read_file ~/.local/share/warren/postgres.json` by a model started in $HOME", async () => {
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "read_file", arguments: { path: ".local/share/warren/postgres.json" } },
          ],
        },
      },
      { agent: "root", match: after("read_file"), reply: { text: "tried" } },
    ]);
    const run = await e2e.prompt("read it", {
      cwd: fx.home,
      env: { HOME: fx.home, WARREN_HOME: fx.warrenHome },
    });
    expect(run.json?.text, run.stderr).toBe("tried");
    const result = lastToolResults(requestsOf(e2e.fake(), "root").at(-1)!)[0]!.value;
    expect(result).toMatchObject({ error: { code: "NOT_ALLOWED" } });
    expect(leaked(JSON.stringify(requestsOf(e2e.fake(), "root")))).toEqual([]);
  }, 120_000);
});

describe("write_file and edit_file never change the files that configure warren", () => {
  const write = (cwd: string, p: string, access?: "cwd" | "any") =>
    writeFileTool.run({ path: p, content: "planted\n" }, ctx(cwd, access));

  it("in the working directory: .mcp.json, .claude/, .codex/, .git/hooks/, .git/config, .warren/ (not its worktrees)", async () => {
    const repo = fx.cwd;
    mkdirSync(path.join(repo, ".git", "hooks"), { recursive: true });
    writeFileSync(path.join(repo, ".git", "config"), "[core]\n");
    for (const p of [
      ".mcp.json",
      ".claude/settings.json",
      ".claude/hooks/lint.sh",
      ".codex/config.toml",
      ".git/hooks/x",
      ".git/hooks/pre-commit",
      ".warren/agents/x.md",
      ".warren/worktrees",
    ]) {
      expectRefused(await write(repo, p), /configures warren/);
      expect(existsSync(path.join(repo, p)), p).toBe(false);
    }
    expectRefused(
      await editFileTool.run(
        { path: ".git/config", old_string: "[core]", new_string: "[core]\n\thooksPath = /x" },
        ctx(repo),
      ),
      /configures warren/,
    );
    expect(readFileSync(path.join(repo, ".git", "config"), "utf8")).toBe("[core]\n");
    // Where isolated children work, and everything else: written.
    expect(await write(repo, ".warren/worktrees/a/f")).toMatchObject({ ok: true });
    expect(readFileSync(path.join(repo, ".warren/worktrees/a/f"), "utf8")).toBe("planted\n");
    expect(await write(repo, "src/.claude.txt")).toMatchObject({ ok: true });
  });

  it("the .git entry itself, a link into them, and at the repository root from a subdirectory", async () => {
    const repo = fx.cwd;
    expectRefused(await write(repo, ".git"), /configures warren/);
    expect(existsSync(path.join(repo, ".git"))).toBe(false);
    mkdirSync(path.join(repo, ".git"));
    mkdirSync(path.join(repo, ".claude"));
    symlinkSync(".claude", path.join(repo, "innocent"));
    expectRefused(await write(repo, "innocent/settings.json"), /configures warren/);
    expect(existsSync(path.join(repo, ".claude", "settings.json"))).toBe(false);
    const sub = path.join(repo, "pkg");
    mkdirSync(sub);
    expectRefused(await write(sub, "../.mcp.json", "any"), /configures warren/);
    expectRefused(await write(sub, "../.claude/settings.json", "any"), /configures warren/);
    expect(existsSync(path.join(repo, ".mcp.json"))).toBe(false);
    // The subdirectory's own .claude too.
    expectRefused(await write(sub, ".claude/settings.json"), /configures warren/);
  });
});
