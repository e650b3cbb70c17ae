// A git worktree per agent (issue 30, SPEC §3 "Worktrees"). An isolated child works in
// `<repo>/.warren/worktrees/<name>-<id8>` on branch `warren/<name>-<id8>`, from its parent's HEAD.
//
// The git work cannot be in the fork's transaction, so it is made safe around it: the child's id
// is decided before (fork.ts derives it from the call's key, the same on every attempt), so the
// path and branch are too. Before creating, leftovers at that path or branch (an attempt that
// crashed mid-`git worktree add`, or after it but before the fork committed) are removed when no
// agent row owns them; a failure while creating, or a fork the database refuses, removes what was
// made. What is left is either a worktree whose agent row exists, or nothing.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import type { Queryable } from "../db/client.js";
import type { WorktreeInfo } from "./agents.sql.js";
import { AgentError } from "./errors.js";
import { realPathOf } from "../tools/paths.js";
import { buildToolEnv } from "../sandbox/env.js";
import {
  createBranch,
  createWorktreeEntry,
  OID,
  readRepository,
  type Repository,
} from "./repository.js";

export const WORKTREES_DIR = path.join(".warren", "worktrees");
const EXCLUDE_LINE = "/.warren/worktrees/";

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * What every git run of warren's own is given, since it runs outside the sandbox: a repository an
 * agent can write (its `.git` in the agent's working directory, or one it made with `git init`)
 * must not make it run a program the agent planted. So no hooks, no fsmonitor, no signing
 * program; the filter and merge drivers the repository's own config defines are turned off
 * (repositoryDrivers; the person's global ones stay); and the environment is the one `bash`
 * gets, plus git's own variables, never warren's secrets.
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

function gitEnv(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = buildToolEnv();
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith("GIT_")) env[key] = value;
  }
  return { ...env, ...extra, GIT_TERMINAL_PROMPT: "0" };
}

function run(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile(
      "git",
      ["-C", cwd, ...args],
      { maxBuffer: 64 * 1024 * 1024, env },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

/**
 * The filter and merge drivers the repository's own config (and what it includes) defines, as
 * settings that turn each off: a filter runs nothing, a merge driver's files conflict. Given as
 * GIT_CONFIG_KEY_<n>/VALUE_<n> pairs, which no name can break out of (a `-c` splits at `=`).
 * Read from the config file when it plainly has none; otherwise git lists them (one process).
 */
async function repositoryDrivers(cwd: string, common?: string): Promise<[string, string][]> {
  const dir = common ?? readRepository(cwd)?.common;
  if (dir !== undefined) {
    let text: string | undefined;
    try {
      text = fs.readFileSync(path.join(dir, "config"), "utf8");
    } catch {
      text = undefined;
    }
    if (text !== undefined && !/filter|merge|include/i.test(text)) return [];
  }
  const listed = await run(
    cwd,
    [...HARDENED, "config", "--show-scope", "--name-only", "--get-regexp", "^(filter|merge)[.]"],
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

/**
 * Runs git with `args` in `cwd`, hardened (HARDENED); never throws for a non-zero exit (see
 * `code`). `common`, when the caller knows it, saves finding the repository's config again.
 */
export async function git(
  cwd: string,
  args: string[],
  env?: NodeJS.ProcessEnv,
  common?: string,
): Promise<GitResult> {
  const drivers = await repositoryDrivers(cwd, common);
  return run(cwd, [...HARDENED, ...args], withSettings(gitEnv(env), drivers));
}

/** Runs git and returns its trimmed output; a failure throws `fail(first line of stderr)`. */
export async function gitOk(
  cwd: string,
  args: string[],
  fail: (reason: string) => Error = (r) => new Error(r),
  env?: NodeJS.ProcessEnv,
  common?: string,
): Promise<string> {
  const r = await git(cwd, args, env, common);
  if (r.code !== 0) throw fail(firstLine(r.stderr || r.stdout) || `git ${args[0]} failed`);
  return r.stdout.trim();
}

export function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l) ?? ""
  );
}

/**
 * An isolated child's id, from its fork call's key: every attempt at one call makes the same
 * child id, so the same worktree path and branch (a UUID in form, version nibble 4).
 */
export function childIdFor(parentId: string, key: string): string {
  const h = createHash("sha256").update(`${parentId}\u0000${key}`).digest("hex");
  const v = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${v}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The path-and-branch-safe form of an agent name. */
export function slug(name: string): string {
  const s = name
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[.-]+|[.-]+$/g, "")
    .replace(/\.\.+/g, ".")
    .replace(/\.lock$/i, "");
  return (s || "agent").slice(0, 40);
}

/**
 * Where an isolated child of a parent working in `cwd` would work; INVALID_ARGS outside a repo.
 * A parent that works in a worktree itself (`parentWorktree`) can only give its child one of the
 * same repository: its `.git` file is the parent's to rewrite, and where it points, warren's git
 * would write (a branch, the worktree's entry) outside the parent's confinement.
 */
export async function planWorktree(
  cwd: string,
  name: string,
  childId: string,
  parentWorktree?: WorktreeInfo | null,
) {
  const invalid = (reason: string) =>
    new AgentError("INVALID_ARGS", `isolation "worktree" needs a git repository: ${reason}`);
  if (!fs.existsSync(cwd)) throw invalid(`working directory ${cwd} does not exist`);
  // Read from the repository's files in the usual layouts; git is asked only about the others.
  const read = readRepository(cwd);
  const found = read ?? (await askGit(cwd));
  if (!found) throw invalid(`${cwd} is not inside a git working tree`);
  const { repo, common, base } = found;
  if (parentWorktree) {
    const expected =
      parentWorktree.common ??
      (readRepository(parentWorktree.repo) ?? (await askGit(parentWorktree.repo)))?.common;
    if (expected === undefined || (await realPathOf(common)) !== (await realPathOf(expected))) {
      throw new AgentError(
        "INVALID_ARGS",
        `${cwd} no longer belongs to the repository its worktree was made from (${expected ?? "gone"}): its .git points to ${common}`,
      );
    }
  }
  if (!base) throw invalid(`${repo} has no commit yet`);
  const leaf = `${slug(name)}-${childId.slice(0, 8)}`;
  return {
    repo,
    common,
    base,
    path: path.join(repo, WORKTREES_DIR, leaf),
    branch: `warren/${leaf}`,
    /** Read from its files: its refs are files too, and the branch may be written as one. */
    refsInFiles: read !== undefined,
  };
}

/** `readRepository`'s answers from one git process; undefined outside a working tree. */
async function askGit(cwd: string): Promise<Repository | undefined> {
  const r = await git(cwd, [
    "rev-parse",
    "--path-format=absolute",
    "--show-toplevel",
    "--git-common-dir",
    "HEAD",
  ]);
  const [repo, common, head] = r.stdout.split("\n").map((l) => l.trim());
  if (!repo || !common || (r.code !== 0 && !/HEAD/.test(r.stderr))) return undefined;
  return { repo, common, base: r.code === 0 && head && OID.test(head) ? head : undefined };
}

/** Adds `.warren/worktrees/` to the repository's `info/exclude` once. */
function excludeWorktrees(common: string): void {
  const file = path.join(common, "info", "exclude");
  let text = "";
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    fs.mkdirSync(path.dirname(file), { recursive: true });
  }
  if (text.split("\n").some((l) => l.trim() === EXCLUDE_LINE)) return;
  const sep = text && !text.endsWith("\n") ? "\n" : "";
  fs.appendFileSync(file, `${sep}${EXCLUDE_LINE}\n`);
}

async function branchExists(repo: string, branch: string): Promise<boolean> {
  return (await git(repo, ["rev-parse", "--verify", "-q", `refs/heads/${branch}`])).code === 0;
}

function branchFile(common: string, branch: string): string {
  return path.join(common, "refs", "heads", ...branch.split("/"));
}

/** Whether anything of `branch` or the worktree `leaf` may exist, read from files (no git run). */
function maybeLeftover(common: string, wtPath: string, branch: string): boolean {
  if (fs.existsSync(wtPath)) return true;
  if (fs.existsSync(path.join(common, "worktrees", path.basename(wtPath)))) return true;
  const ref = branchFile(common, branch);
  if (fs.existsSync(ref) || fs.existsSync(`${ref}.lock`)) return true;
  try {
    return fs
      .readFileSync(path.join(common, "packed-refs"), "utf8")
      .includes(` refs/heads/${branch}\n`);
  } catch {
    return false;
  }
}

/** Whether the directories from `repo` down to `wtPath`'s parent are real ones, no symlink. */
function plainPath(repo: string, wtPath: string): boolean {
  let dir = repo;
  for (const part of path.relative(repo, path.dirname(wtPath)).split(path.sep)) {
    dir = path.join(dir, part);
    const st = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (st && !st.isDirectory()) return false;
  }
  return true;
}

/** Removes a worktree and its branch, whatever state a crash left them in. */
export async function removeWorktree(
  repo: string,
  wtPath: string,
  branch: string,
  common?: string,
): Promise<void> {
  // The branch's lock, left by a crash while createBranch wrote it (the name is this agent's).
  if (common) fs.rmSync(`${branchFile(common, branch)}.lock`, { force: true });
  // `git worktree add` locks the entry while it works: a crash there leaves it locked.
  await git(repo, ["worktree", "unlock", wtPath], undefined, common);
  await git(repo, ["worktree", "remove", "--force", "--force", wtPath], undefined, common);
  if (plainPath(repo, wtPath)) fs.rmSync(wtPath, { recursive: true, force: true });
  await git(repo, ["worktree", "prune"], undefined, common);
  if (await branchExists(repo, branch)) {
    await gitOk(repo, ["branch", "-D", branch], (r) => new Error(`cannot delete ${branch}: ${r}`));
  }
}

/** Test hooks: a step that fails as a crash would stop there (tests only). */
export interface CreateHooks {
  afterBranch?: () => void | Promise<void>;
  afterEntry?: () => void | Promise<void>;
  afterAdd?: () => void | Promise<void>;
}

/**
 * Makes the worktree `plan` names. `owned` says whether the child's agent row exists already (an
 * earlier attempt committed the fork): then what is there is reused. Otherwise anything at the
 * path or branch is a leftover of a crashed attempt and is removed first; a failure while
 * creating removes what was made.
 */
export async function createWorktree(
  plan: WorktreeInfo & { common: string; refsInFiles?: boolean },
  owned: boolean,
  hooks: CreateHooks = {},
): Promise<WorktreeInfo> {
  const { repo, common, path: wtPath, branch, base } = plan;
  const info: WorktreeInfo = { path: wtPath, branch, base, repo, common };
  if (owned && fs.existsSync(wtPath) && (await branchExists(repo, branch))) return info;
  // A symlink on the way (planted by an agent that can write the repository) would have the
  // worktree made, or a leftover removed, wherever it points.
  if (!plainPath(repo, wtPath)) {
    throw new AgentError(
      "INVALID_ARGS",
      `${path.dirname(wtPath)} is reached through a symlink; worktrees are made only in the repository itself`,
    );
  }
  excludeWorktrees(common);
  if (maybeLeftover(common, wtPath, branch)) await removeWorktree(repo, wtPath, branch, common);
  try {
    fs.mkdirSync(path.dirname(wtPath), { recursive: true });
    // The branch and the worktree's entry written as files, as git writes them, leave one git
    // process of the three `git worktree add -b` runs: the checkout. Where either cannot be done
    // plainly, git does it (and says why it cannot, if so).
    const fail = (r: string) => new AgentError("INVALID_ARGS", `git worktree add failed: ${r}`);
    const branched = plan.refsInFiles === true && createBranch(common, branch, base);
    await hooks.afterBranch?.();
    const entry = branched ? createWorktreeEntry(common, wtPath, branch) : undefined;
    if (entry) {
      await hooks.afterEntry?.();
      const checkout = ["reset", "--hard", "-q", "--no-recurse-submodules"];
      await gitOk(wtPath, checkout, fail, undefined, common);
      fs.rmSync(path.join(entry, "locked"), { force: true });
    } else {
      const add = branched ? [wtPath, branch] : ["-b", branch, wtPath, base];
      await gitOk(repo, ["worktree", "add", "-q", ...add], fail, undefined, common);
    }
    await hooks.afterAdd?.();
  } catch (err) {
    await removeWorktree(repo, wtPath, branch, common).catch(() => undefined);
    throw err;
  }
  return info;
}

export type Changes = NonNullable<WorktreeInfo["changes"]>;

/**
 * What a worktree changed against its base: committed, staged, unstaged and untracked alike
 * (through a copy of its index, so the worktree's own index is left as it is).
 */
export async function changesOf(wt: WorktreeInfo): Promise<Changes | null> {
  const numstat = await diffAgainstBase(wt, ["--numstat"]);
  if (numstat === null) return null;
  const out: Changes = { files: 0, added: 0, removed: 0 };
  for (const line of numstat.split("\n")) {
    const m = /^(-|\d+)\t(-|\d+)\t/.exec(line);
    if (!m) continue;
    out.files++;
    out.added += m[1] === "-" ? 0 : Number(m[1]);
    out.removed += m[2] === "-" ? 0 : Number(m[2]);
  }
  return out;
}

/** `git diff <base>` of everything in the worktree (untracked files included); null: it is gone. */
export async function diffAgainstBase(wt: WorktreeInfo, args: string[]): Promise<string | null> {
  if (wt.removed || !fs.existsSync(wt.path)) return null;
  const indexPath = await gitOk(wt.path, [
    "rev-parse",
    "--path-format=absolute",
    "--git-path",
    "index",
  ]);
  const tmp = `${indexPath}.warren-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    if (fs.existsSync(indexPath)) {
      fs.copyFileSync(indexPath, tmp);
      // The copy keeps the index's mtime: git compares it with the files' to spot "racy" entries
      // (changed within the index's second, same size); a newer copy would hide such a change.
      const st = fs.statSync(indexPath);
      fs.utimesSync(tmp, st.atime, st.mtime);
    }
    const env = { GIT_INDEX_FILE: tmp };
    await gitOk(wt.path, ["add", "-A"], undefined, env);
    // No external diff program and no textconv: both are programs the repository's config names.
    const plain = ["--no-ext-diff", "--no-textconv"];
    return await gitOk(wt.path, ["diff", "--cached", ...plain, ...args, wt.base], undefined, env);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** Is anything in the worktree not yet on `base`'s side of the parent's branch (i.e. unmerged)? */
export async function hasUnmergedWork(wt: WorktreeInfo): Promise<boolean> {
  const changes = await changesOf(wt);
  if (!changes || changes.files === 0) return false;
  // Merged: nothing uncommitted, and the branch's tip is in the parent's HEAD.
  const status = await git(wt.path, ["status", "--porcelain"]);
  if (status.code !== 0 || status.stdout.trim()) return true;
  const merged = await git(wt.repo, ["merge-base", "--is-ancestor", wt.branch, "HEAD"]);
  return merged.code !== 0;
}

/**
 * Measures an isolated agent's worktree and keeps the result on its row (`worktree.changes`) when
 * it moved, so the panel (and every TUI, through the row's hint) shows it without running git.
 * Only the lease's holder writes it; a failed measurement leaves the last one.
 */
export async function recordChanges(
  q: Queryable,
  agentId: string,
  wt: WorktreeInfo,
  fence?: { owner: string; epoch: number },
): Promise<void> {
  if (wt.removed) return;
  const changes = await changesOf(wt).catch(() => null);
  if (!changes) return;
  const known = wt.changes;
  if (
    known?.files === changes.files &&
    known.added === changes.added &&
    known.removed === changes.removed
  )
    return;
  await q.execute(sql`
    update agents set worktree = jsonb_set(worktree, '{changes}', ${JSON.stringify(changes)}::jsonb)
     where id = ${agentId} and worktree is not null
       and (${fence?.owner ?? null}::text is null
            or (lease_owner = ${fence?.owner ?? null}::text and lease_epoch = ${fence?.epoch ?? null}::bigint))`);
  wt.changes = changes;
}

export function describeChanges(c: Changes): string {
  return `${c.files} file${c.files === 1 ? "" : "s"} +${c.added} -${c.removed}`;
}
