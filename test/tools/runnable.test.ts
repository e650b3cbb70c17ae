// What a hook's or MCP server's command resolves to (src/tools/runnable.ts), and when that is
// refused: the program, file arguments, npx's node_modules, every symbolic link on the way.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  refusal,
  resolveCommand,
  resolveShellCommand,
  type RunTrust,
} from "../../src/tools/runnable.js";

let base: string;
let work: string;
let outside: string;
let trust: RunTrust;

function file(p: string, body = "#!/bin/sh\n"): string {
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, body);
  chmodSync(p, 0o755);
  return p;
}

beforeEach(() => {
  base = mkdtempSync(path.join(os.tmpdir(), "warren-runnable-"));
  work = path.join(base, "work");
  outside = path.join(base, "outside");
  mkdirSync(work);
  mkdirSync(outside);
  trust = { writable: [work], trusted: [], configFile: "/cfg.json" };
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const shell = (command: string, pathVar = "/usr/bin:/bin") =>
  resolveShellCommand(command, work, { CLAUDE_PROJECT_DIR: work, HOME: base }, pathVar).files;

describe("resolving a hook's shell command", () => {
  it("finds programs and file arguments across quotes, variables, pipes and assignments", () => {
    const a = file(path.join(work, "tools", "a.js"));
    const lint = file(path.join(work, ".claude", "hooks", "lint.sh"));
    expect(shell(`bash "$CLAUDE_PROJECT_DIR"/.claude/hooks/lint.sh`)).toEqual([
      "/usr/bin/bash",
      lint,
    ]);
    expect(shell(`jq -r '.tool_input' | FOO=1 node tools/a.js && echo ok`)).toEqual([
      "/usr/bin/jq",
      "/usr/bin/node",
      a,
    ]);
    expect(shell(`env X=1 ./tools/a.js --check`)).toEqual([a]);
    // A word with an expansion that cannot be known is left out; a redirection's target too.
    expect(shell(`node "$UNKNOWN"/tools/a.js > tools/a.js`)).toEqual(["/usr/bin/node"]);
    expect(shell(`echo hi; exit 0`)).toEqual([]);
  });

  it("a PATH entry inside the working directory yields the file planted there", () => {
    const planted = file(path.join(work, "bin", "lint"));
    expect(shell("lint", `${path.join(work, "bin")}:/usr/bin`)).toEqual([planted]);
    expect(refusal("hook", { files: shell("lint", `${work}/bin:/usr/bin`) }, trust)).toMatch(
      /^hook refused: it would run .*\/bin\/lint, which an agent could have written/,
    );
  });
});

describe("resolving an MCP server's command", () => {
  it("npx and npm exec: the packages npx would pick up the tree", () => {
    const pkg = path.join(work, "node_modules", "@s", "pkg");
    mkdirSync(pkg, { recursive: true });
    const bin = file(path.join(work, "node_modules", ".bin", "pkg"));
    const files = (args: string[], cmd = "npx") =>
      resolveCommand(cmd, args, path.join(work), "/usr/bin").files.filter((f) =>
        f.startsWith(work),
      );
    expect(files(["-y", "@s/pkg@1.2.3"])).toEqual([bin, pkg]);
    expect(files(["-p", "@s/pkg", "other"])).toEqual([bin, pkg]);
    expect(files(["exec", "--", "@s/pkg"], "npm")).toEqual([bin, pkg]);
    expect(files(["-y", "unrelated"])).toEqual([]);
  });
});

describe("refusal", () => {
  it("follows every link: a link in the working directory, or a link through it, is refused", () => {
    const real = file(path.join(outside, "srv.js"));
    expect(refusal("s", { files: [real] }, trust)).toBeUndefined();
    symlinkSync(real, path.join(work, "link.js"));
    expect(refusal("s", { files: [path.join(work, "link.js")] }, trust)).toMatch(
      /it would run .*work\/link\.js, which an agent/,
    );
    // outside/hop -> work/mid -> outside/srv.js: the middle link is the agent's.
    symlinkSync(real, path.join(work, "mid"));
    symlinkSync(path.join(work, "mid"), path.join(outside, "hop"));
    expect(refusal("s", { files: [path.join(outside, "hop")] }, trust)).toMatch(
      /\(through .*work\/mid\)/,
    );
  });

  it("the folders read-only to agents and trusted_paths are not refused; worktrees are", () => {
    for (const p of [".claude/hooks/x.sh", ".warren/x", ".codex/x", ".git/hooks/x"]) {
      expect(refusal("s", { files: [file(path.join(work, p))] }, trust), p).toBeUndefined();
    }
    const inWorktree = file(path.join(work, ".warren", "worktrees", "a", "x.sh"));
    expect(refusal("s", { files: [inWorktree] }, trust)).toMatch(/refused/);
    const tools = file(path.join(work, "tools", "x.sh"));
    expect(refusal("s", { files: [tools] }, trust)).toMatch(/"trusted_paths" in \/cfg\.json/);
    trust.trusted = [path.join(work, "tools")];
    expect(refusal("s", { files: [tools] }, trust)).toBeUndefined();
  });
});
