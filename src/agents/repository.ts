// How warren runs git, and in which repository. warren's git runs outside the sandbox in a
// repository agents can write (the `.git` of their working directory), so every run is hardened
// (no hooks, fsmonitor, signing program or repository-defined driver; bash's environment), and
// every run first asks git which repository the directory belongs to: a tree's git runs only in
// the repository recorded when the tree started (`agents.repository` on its root), whatever a
// `.git` planted later says.
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { buildToolEnv } from "../sandbox/env.js";
import { firstLine } from "../text/format.js";

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * What every git run of warren's is given: a repository an agent can write must not make it run
 * a program the agent planted. The filter and merge drivers the repository's own config defines
 * are turned off too (repositoryDrivers; the person's global ones stay).
 */
const HARDENED = [
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "commit.gpgSign=false",
  "-c",
  "tag.gpgSign=false",
];

/** The environment `bash` gets, plus git's own variables: never warren's secrets. */
function gitEnv(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = buildToolEnv();
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith("GIT_")) env[key] = value;
  }
  return { ...env, ...extra, GIT_TERMINAL_PROMPT: "0" };
}

/** `git -C cwd <args>` hardened; never throws for a non-zero exit (see `code`). */
function run(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile(
      "git",
      ["-C", cwd, ...HARDENED, ...args],
      { maxBuffer: 64 * 1024 * 1024, env },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

/**
 * The common git directory of the repository around `cwd` as a real path, as git finds it; null
 * outside any repository (or when `cwd` is gone). What a tree records when it starts.
 */
export async function commonDirOf(cwd: string): Promise<string | null> {
  const r = await run(cwd, ["rev-parse", "--path-format=absolute", "--git-common-dir"], gitEnv());
  const common = r.stdout.trim();
  if (r.code !== 0 || !common) return null;
  return fs.realpath(common).catch(() => null);
}

/** Why warren's git does not run in a directory: `found` is the repository it is in, if any. */
export class RepositoryRefused extends Error {
  override name = "RepositoryRefused";
  constructor(
    message: string,
    readonly found: string | null,
  ) {
    super(message);
  }
}

/** A working tree warren's git runs in, checked against the tree's recorded repository. */
export interface Repository {
  /** The top level of the working tree, absolute. */
  top: string;
  /** Its git directory (a linked worktree's own, under the common one's `worktrees/`). */
  gitDir: string;
  /** The common git directory, real: the tree's recorded one. */
  common: string;
  /** Its index file, as git names it. */
  index: string;
  /** HEAD's commit; undefined on a branch with no commit yet. */
  head: string | undefined;
  /** Runs git there, pinned to this repository (no discovery again); never throws on exit. */
  run(args: string[], env?: NodeJS.ProcessEnv): Promise<GitResult>;
  /**
   * Runs git there (in `gitDir`, as `runIn`, when given) and returns its trimmed output; a
   * failure throws `fail(its first line)`.
   */
  ok(
    args: string[],
    fail?: (reason: string) => Error,
    env?: NodeJS.ProcessEnv,
    gitDir?: string,
  ): Promise<string>;
  /**
   * As `run`, with another git directory of warren's own (a checkpoint vault) for this working
   * tree: the same hardening and the same drivers turned off.
   */
  runIn(gitDir: string, args: string[], env?: NodeJS.ProcessEnv): Promise<GitResult>;
}

/**
 * The repository git finds in `cwd`, refused (RepositoryRefused, one line) unless its common git
 * directory is `recorded`, the tree's: a `.git` an agent replaced (`gitdir: /other/repo/.git`)
 * would otherwise have warren write branches, worktree entries and merges there. The runs that
 * follow are given its git directory and working tree, so a `.git` swapped after the check is
 * not followed either.
 */
export async function openRepository(cwd: string, recorded: string | null): Promise<Repository> {
  // The recorded repository's drivers are listed meanwhile (a read of its config, which runs
  // nothing): they are the ones a run in its main working tree needs.
  const early = recorded === null ? undefined : repositoryDrivers(cwd, [`--git-dir=${recorded}`]);
  const asked = await run(
    cwd,
    [
      "rev-parse",
      "--path-format=absolute",
      "--git-common-dir",
      "--absolute-git-dir",
      "--git-path",
      "index",
      "--show-toplevel",
      "HEAD",
      "--",
    ],
    gitEnv(),
  );
  const [common, gitDir, index, top, head] = asked.stdout.split("\n").map((l) => l.trim());
  const found = common ? await fs.realpath(common).catch(() => common) : null;
  if (found !== recorded) {
    const where =
      recorded === null
        ? "the tree recorded no git repository when it started"
        : `the tree's repository is ${recorded}`;
    throw new RepositoryRefused(
      found === null
        ? `${cwd} is not inside a git working tree (${where})`
        : `warren's git does not run in ${cwd}: its .git leads to ${found}, and ${where}`,
      found,
    );
  }
  // HEAD is the last question: on a branch with no commit, only it fails.
  const unborn = asked.code !== 0 && /\bHEAD\b/.test(asked.stderr);
  if (!gitDir || !index || !top || (asked.code !== 0 && !unborn)) {
    throw new RepositoryRefused(
      `${cwd} is not inside a git working tree: ${firstLine(asked.stderr) || "git rev-parse failed"}`,
      found,
    );
  }
  const pinned = [`--git-dir=${gitDir}`, `--work-tree=${top}`];
  // A linked worktree's git directory may add settings of its own (config.worktree): listed there.
  let drivers = gitDir === common ? early : undefined;
  const repository: Repository = {
    top,
    gitDir,
    common: found!,
    index,
    head: unborn ? undefined : head || undefined,
    run: (args, env) => repository.runIn(gitDir, args, env),
    async runIn(dir, args, env) {
      drivers ??= repositoryDrivers(cwd, pinned);
      const at = [`--git-dir=${dir}`, `--work-tree=${top}`];
      return run(cwd, [...at, ...args], withSettings(gitEnv(env), await drivers));
    },
    async ok(args, fail = (r) => new Error(r), env, dir = gitDir) {
      const r = await repository.runIn(dir, args, env);
      if (r.code !== 0) throw fail(firstLine(r.stderr || r.stdout) || `git ${args[0]} failed`);
      return r.stdout.trim();
    },
  };
  return repository;
}

/**
 * Makes `dir` (absent) an empty bare repository of `objectFormat` with no template (no sample
 * hooks): a git directory of warren's own, outside every working tree. Whatever GIT_DIR-like
 * variables warren was started with are not followed.
 */
export async function initBare(dir: string, objectFormat: string): Promise<void> {
  const env = gitEnv();
  for (const key of ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"]) {
    delete env[key];
  }
  const args = ["init", "--bare", "-q", "--template=", `--object-format=${objectFormat}`, dir];
  const r = await run(path.dirname(dir), args, env);
  if (r.code !== 0) throw new Error(firstLine(r.stderr) || "git init failed");
}

/**
 * The filter and merge drivers the repository's own config (and what it includes) defines, as
 * settings that turn each off: a filter runs nothing, a merge driver's files conflict. Given as
 * GIT_CONFIG_KEY_<n>/VALUE_<n> pairs, which no name can break out of (a `-c` splits at `=`).
 */
async function repositoryDrivers(cwd: string, pinned: string[]): Promise<[string, string][]> {
  const listed = await run(
    cwd,
    [...pinned, "config", "--show-scope", "--name-only", "--get-regexp", "^(filter|merge)[.]"],
    gitEnv(),
  );
  const off = new Map<string, string>();
  for (const line of listed.stdout.split("\n")) {
    const m = /^(?:local|worktree)\t(filter|merge)\.(.+)\.[^.]+$/i.exec(line);
    if (!m) continue;
    const [, kind, name] = m;
    if (kind!.toLowerCase() === "filter") {
      for (const key of ["clean", "smudge", "process"]) off.set(`filter.${name}.${key}`, "");
      off.set(`filter.${name}.required`, "false");
    } else off.set(`merge.${name}.driver`, "false");
  }
  return [...off];
}

/** `settings` added to the environment's GIT_CONFIG_COUNT list (after any already there). */
function withSettings(env: NodeJS.ProcessEnv, settings: [string, string][]): NodeJS.ProcessEnv {
  if (settings.length === 0) return env;
  const out = { ...env };
  let n = Number(out.GIT_CONFIG_COUNT ?? 0) || 0;
  for (const [key, value] of settings) {
    out[`GIT_CONFIG_KEY_${n}`] = key;
    out[`GIT_CONFIG_VALUE_${n}`] = value;
    n++;
  }
  out.GIT_CONFIG_COUNT = String(n);
  return out;
}
