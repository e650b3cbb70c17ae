// A git worktree per agent (issue 30, SPEC §3 "Worktrees"). An isolated child works in
// `<repo>/.warren/worktrees/<name>-<id8>` on branch `warren/<name>-<id8>`, from its parent's HEAD.
//
// The git work cannot be in the fork's transaction, so it is made safe around it: the child's id
// is decided before (fork.ts derives it from the call's key, the same on every attempt), so the
// path and branch are too. When `git worktree add -b` cannot make them, leftovers there (an
// attempt that crashed mid-`git worktree add`, or after it but before the fork committed) are
// removed, when no agent row owns them, and git tries once more; a failure while creating, or a
// fork the database refuses, removes what was made. What is left is either a worktree whose agent
// row exists, or nothing. Every git run goes through src/agents/repository.ts: hardened, and only
// in the tree's own repository.
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import type { Queryable } from "../db/client.js";
import type { WorktreeInfo } from "./agents.sql.js";
import { AgentError } from "./errors.js";
import { openRepository, RepositoryRefused, type Repository } from "./repository.js";

export const WORKTREES_DIR = path.join(".warren", "worktrees");
const IGNORE_ALL = "# made by warren: its agents' worktrees are not this repository's files\n*\n";

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
 * The repository of a worktree warren made, checked as every git run is: its `.git` (which the
 * agent working there can rewrite) must still lead to the repository it was made in, the tree's.
 * Worktrees made before warren recorded it (no `common`) are refused.
 */
export function worktreeRepository(wt: WorktreeInfo, dir: string): Promise<Repository> {
  return openRepository(dir, wt.common ?? null);
}

/**
 * Where an isolated child of a parent working in `cwd` would work, in a tree whose repository is
 * `recorded` (its root's `repository`): INVALID_ARGS outside a repository, or in any other one
 * (a `.git` an agent planted that leads elsewhere; a worktree's `.git` file rewritten).
 */
export async function planWorktree(
  cwd: string,
  name: string,
  childId: string,
  recorded: string | null,
) {
  const invalid = (reason: string) =>
    new AgentError("INVALID_ARGS", `isolation "worktree" needs a git repository: ${reason}`);
  if (!fs.existsSync(cwd)) throw invalid(`working directory ${cwd} does not exist`);
  const git = await openRepository(cwd, recorded).catch((err: unknown) => {
    if (!(err instanceof RepositoryRefused)) throw err;
    throw err.found === null ? invalid(err.message) : new AgentError("INVALID_ARGS", err.message);
  });
  if (!git.head) throw invalid(`${git.top} has no commit yet`);
  const leaf = `${slug(name)}-${childId.slice(0, 8)}`;
  return {
    repo: git.top,
    common: git.common,
    base: git.head,
    path: path.join(git.top, WORKTREES_DIR, leaf),
    branch: `warren/${leaf}`,
    /** The checked repository, for createWorktree's runs. */
    git,
  };
}

/**
 * Makes git ignore everything under `.warren/worktrees/` (the worktrees, and this file itself)
 * with a `.gitignore` there, so the parent's status stays clean: warren writes inside `.git` only
 * through git, and git has no command for `info/exclude`. Made once, never through a symlink
 * (`wx`: an existing file or link is left as it is).
 */
function ignoreWorktrees(worktrees: string): void {
  try {
    fs.writeFileSync(path.join(worktrees, ".gitignore"), IGNORE_ALL, { flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
}

async function branchExists(git: Repository, branch: string): Promise<boolean> {
  return (await git.run(["rev-parse", "--verify", "-q", `refs/heads/${branch}`])).code === 0;
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

/**
 * Removes a worktree and its branch, whatever state a crash left them in, from the repository
 * `git` (the one it was made in, checked). A `git worktree add` killed mid-way leaves its entry
 * locked: unlocked first.
 */
async function removeIn(git: Repository, wtPath: string, branch: string): Promise<void> {
  await git.run(["worktree", "unlock", wtPath]);
  await git.run(["worktree", "remove", "--force", "--force", wtPath]);
  if (plainPath(git.top, wtPath)) fs.rmSync(wtPath, { recursive: true, force: true });
  await git.run(["worktree", "prune"]);
  if (await branchExists(git, branch)) {
    await git.ok(["branch", "-D", branch], (r) => new Error(`cannot delete ${branch}: ${r}`));
  }
}

/** Removes a worktree warren made, and its branch (refused when its repository moved). */
export async function removeWorktree(wt: WorktreeInfo): Promise<void> {
  await removeIn(await worktreeRepository(wt, wt.repo), wt.path, wt.branch);
}

/** Test hooks: a step that fails as a crash would stop there (tests only). */
export interface CreateHooks {
  afterAdd?: () => void | Promise<void>;
}

/**
 * Makes the worktree `plan` names (`git worktree add -b`). `owned` says whether the child's agent
 * row exists already (an earlier attempt committed the fork): then what is there is reused.
 * Otherwise anything at the path or branch that keeps git from making them is a leftover of a
 * crashed attempt at this same call (both are named from the child's id): removed, and made
 * again. A failure while creating removes what was made.
 */
export async function createWorktree(
  plan: WorktreeInfo & { common: string; git?: Repository },
  owned: boolean,
  hooks: CreateHooks = {},
): Promise<WorktreeInfo> {
  const { repo, common, path: wtPath, branch, base } = plan;
  const info: WorktreeInfo = { path: wtPath, branch, base, repo, common };
  const git = plan.git ?? (await worktreeRepository(info, repo));
  if (owned && fs.existsSync(wtPath) && (await branchExists(git, branch))) return info;
  // A symlink on the way (planted by an agent that can write the repository) would have the
  // worktree made, or a leftover removed, wherever it points.
  if (!plainPath(repo, wtPath)) {
    throw new AgentError(
      "INVALID_ARGS",
      `${path.dirname(wtPath)} is reached through a symlink; worktrees are made only in the repository itself`,
    );
  }
  const fail = (r: string) => new AgentError("INVALID_ARGS", `git worktree add failed: ${r}`);
  const add = ["worktree", "add", "-q", "-b", branch, wtPath, base];
  try {
    fs.mkdirSync(path.dirname(wtPath), { recursive: true });
    if ((await git.run(add)).code !== 0) {
      await removeIn(git, wtPath, branch);
      await git.ok(add, fail);
    }
    ignoreWorktrees(path.dirname(wtPath));
    await hooks.afterAdd?.();
  } catch (err) {
    await removeIn(git, wtPath, branch).catch(() => undefined);
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
  return numstat === null ? null : countChanges(numstat);
}

/** What the worktree `git` (checked) changed against `base`, as changesOf. */
export async function changesIn(git: Repository, base: string): Promise<Changes> {
  return countChanges(await diffIn(git, base, ["--numstat"]));
}

function countChanges(numstat: string): Changes {
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
  return diffIn(await worktreeRepository(wt, wt.path), wt.base, args);
}

async function diffIn(git: Repository, base: string, args: string[]): Promise<string> {
  // The copy lives outside the repository: warren writes inside `.git` only through git.
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), "warren-index-"));
  const tmp = path.join(tmpDir, "index");
  try {
    if (fs.existsSync(git.index)) {
      fs.copyFileSync(git.index, tmp);
      // The copy keeps the index's mtime: git compares it with the files' to spot "racy" entries
      // (changed within the index's second, same size); a newer copy would hide such a change.
      const st = fs.statSync(git.index);
      fs.utimesSync(tmp, st.atime, st.mtime);
    }
    const env = { GIT_INDEX_FILE: tmp };
    await git.ok(["add", "-A"], undefined, env);
    // No external diff program and no textconv: both are programs the repository's config names.
    const plain = ["--no-ext-diff", "--no-textconv"];
    return await git.ok(["diff", "--cached", ...plain, ...args, base], undefined, env);
  } finally {
    fs.rmSync(tmpDir, { recursive: true, force: true });
  }
}

/** Is anything in the worktree not yet on `base`'s side of the parent's branch (i.e. unmerged)? */
export async function hasUnmergedWork(wt: WorktreeInfo): Promise<boolean> {
  if (wt.removed || !fs.existsSync(wt.path)) return false;
  const child = await worktreeRepository(wt, wt.path);
  if ((await changesIn(child, wt.base)).files === 0) return false;
  // Merged: nothing uncommitted, and the branch's tip is in the parent's HEAD.
  const status = await child.run(["status", "--porcelain"]);
  if (status.code !== 0 || status.stdout.trim()) return true;
  const parent = await worktreeRepository(wt, wt.repo);
  const merged = await parent.run(["merge-base", "--is-ancestor", wt.branch, "HEAD"]);
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
