// git for tests on real repositories in temp directories: a run's trimmed output, and a `git`
// shim put first on PATH that runs a line of shell before handing over to the real git.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** `git -C cwd ...args`, its output trimmed; throws on a non-zero exit. */
export function g(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-C", cwd, ...args], { encoding: "utf8" }).trim();
}

/**
 * A directory (to put first on PATH, and to remove after) holding a `git` that runs `line` (its
 * arguments are "$@") and then the real git with the same arguments.
 */
export function gitShim(line: string): string {
  const shim = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-git-shim-")));
  const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  fs.writeFileSync(path.join(shim, "git"), `#!/bin/sh\n${line}\nexec '${real}' "$@"\n`, {
    mode: 0o755,
  });
  return shim;
}

/** Makes `dir` a repository on `main` with `files` (name → content) in its first commit. */
export function committedRepo(dir: string, files: Record<string, string>): string {
  g(dir, "init", "-q", "-b", "main");
  g(dir, "config", "user.email", "t@example.com");
  g(dir, "config", "user.name", "t");
  for (const [name, content] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, name), content);
  }
  g(dir, "add", "-A");
  g(dir, "commit", "-q", "-m", "init");
  return dir;
}
