// What a person does with an isolated child's work (SPEC §3 "Worktrees"): see it (`diff`), take
// it into the working tree its parent works in (`merge`), throw it away (`discard`); and reaping,
// which removes a worktree with nothing in it and keeps one with unmerged work.
import { sql } from "drizzle-orm";
import fs from "node:fs";
import type { Db } from "../db/client.js";
import type { AgentRow, WorktreeInfo } from "./agents.sql.js";
import { RepositoryRefused, type Repository } from "./repository.js";
import { firstLine } from "../text/format.js";
import {
  changesIn,
  changesOf,
  describeChanges,
  diffAgainstBase,
  hasUnmergedWork,
  removeWorktree,
  worktreeRepository,
} from "./worktree.js";

/** A refusal or failure whose message is all a person needs (one line). */
export class WorktreeError extends Error {
  override name = "WorktreeError";
}

function who(agent: Pick<AgentRow, "name" | "id">): string {
  return `${agent.name} (${agent.id.slice(0, 8)})`;
}

/** The agent's worktree, or a one-line refusal saying why there is none. */
export function worktreeOf(agent: AgentRow): WorktreeInfo {
  const wt = agent.worktree;
  if (!wt) {
    throw new WorktreeError(
      `${who(agent)} has no worktree (it was not forked with isolation "worktree")`,
    );
  }
  if (wt.removed) throw new WorktreeError(`${who(agent)}'s worktree was already removed`);
  if (!fs.existsSync(wt.path))
    throw new WorktreeError(`${who(agent)}'s worktree ${wt.path} is gone`);
  return wt;
}

/** A refusal of the repository check (a `.git` that leads elsewhere now) as a WorktreeError. */
async function refusedAsWorktreeError<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof RepositoryRefused) throw new WorktreeError(err.message);
    throw err;
  }
}

/** The child's change against its base (uncommitted and untracked files included). */
export async function diffAgent(agent: AgentRow): Promise<string> {
  const wt = worktreeOf(agent);
  return (await refusedAsWorktreeError(diffAgainstBase(wt, ["--stat", "--patch"]))) ?? "";
}

/** An identity for warren's commits where the repository has none configured. */
async function identity(git: Repository): Promise<string[]> {
  const email = await git.run(["config", "user.email"]);
  return email.code === 0 && email.stdout.trim()
    ? []
    : ["-c", "user.name=warren", "-c", "user.email=warren@localhost"];
}

async function markRemoved(db: Db, agentId: string): Promise<void> {
  await db.execute(sql`update agents set worktree = worktree || '{"removed":true}'::jsonb
                        where id = ${agentId}::uuid and worktree is not null`);
}

/**
 * Commits what the child left uncommitted on its branch, then merges the branch (--no-ff) into
 * the working tree the parent works in. A dirty target is refused before anything changes; a
 * conflict aborts the merge and names the files; the branch keeps the work either way.
 */
export async function mergeAgent(db: Db, agent: AgentRow): Promise<string> {
  const wt = worktreeOf(agent);
  if (agent.state === "running") {
    throw new WorktreeError(`${who(agent)} is running; merge once it is idle or dead`);
  }
  return refusedAsWorktreeError(merge(db, agent, wt));
}

async function merge(db: Db, agent: AgentRow, wt: WorktreeInfo): Promise<string> {
  // Both checked before anything runs: the target's `.git` and the worktree's.
  const target = await worktreeRepository(wt, wt.repo);
  const child = await worktreeRepository(wt, wt.path);
  const dirty = await target.ok(["status", "--porcelain"], (r) => new WorktreeError(r));
  if (dirty) {
    const n = dirty.split("\n").length;
    throw new WorktreeError(
      `${wt.repo} has uncommitted changes (${n} path${n === 1 ? "" : "s"}); commit or stash them before merging ${wt.branch}`,
    );
  }
  const changes = await changesIn(child, wt.base);
  const fail = (r: string) => new WorktreeError(`merging ${wt.branch}: ${r}`);
  await child.ok(["add", "-A"], fail);
  if ((await child.run(["diff", "--cached", "--quiet"])).code !== 0) {
    const id = await identity(child);
    await child.ok([...id, "commit", "-q", "-m", `warren: ${agent.name}'s uncommitted work`], fail);
  }
  if ((await target.run(["merge-base", "--is-ancestor", wt.branch, "HEAD"])).code === 0) {
    return `nothing to merge: ${wt.branch} has nothing ${wt.repo} lacks`;
  }
  const id = await identity(target);
  const merged = await target.run([
    ...id,
    "merge",
    "--no-ff",
    "-q",
    "-m",
    `warren: merge ${agent.name} (${wt.branch})`,
    wt.branch,
  ]);
  if (merged.code !== 0) {
    const conflicted = (await target.run(["diff", "--name-only", "--diff-filter=U"])).stdout
      .split("\n")
      .filter(Boolean);
    await target.run(["merge", "--abort"]);
    if (conflicted.length > 0) {
      throw new WorktreeError(
        `merge of ${wt.branch} conflicts in ${conflicted.join(", ")}; aborted, ${wt.repo} is unchanged and ${wt.branch} keeps the work`,
      );
    }
    throw fail(firstLine(merged.stderr || merged.stdout) || "git merge failed");
  }
  let tail = "";
  if (agent.state === "dead") {
    await removeWorktree(wt);
    await markRemoved(db, agent.id);
    tail = "; worktree and branch removed";
  }
  const what = changes ? ` (${describeChanges(changes)})` : "";
  return `merged ${wt.branch} into ${wt.repo}${what}${tail}`;
}

/** Removes the child's worktree and branch, its work with them (the caller has confirmed). */
export async function discardAgent(db: Db, agent: AgentRow): Promise<string> {
  const wt = worktreeOf(agent);
  if (agent.state === "running" || agent.state === "waiting") {
    throw new WorktreeError(`${who(agent)} is ${agent.state} in that worktree; kill it first`);
  }
  const changes = await refusedAsWorktreeError(changesOf(wt));
  await refusedAsWorktreeError(removeWorktree(wt));
  await markRemoved(db, agent.id);
  const what = changes ? ` (${describeChanges(changes)} discarded)` : "";
  return `removed ${wt.path} and branch ${wt.branch}${what}`;
}

/**
 * After reaping: a reaped agent's worktree without unmerged work is removed; one with unmerged
 * work stays (warren ls shows it) until merged or discarded. Returns the paths kept.
 */
export async function sweepReaped(db: Db, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.execute<{ id: string; worktree: WorktreeInfo }>(sql`
    select id, worktree from agents
     where id = any(${sql.param(ids)}::uuid[]) and worktree is not null
       and coalesce((worktree->>'removed')::boolean, false) = false`);
  const kept: string[] = [];
  for (const row of rows.rows) {
    const wt = row.worktree;
    if (!fs.existsSync(wt.path)) {
      await markRemoved(db, row.id);
      continue;
    }
    // A worktree whose repository check fails (its `.git`, or the target's, now leads elsewhere)
    // is kept, as one with unmerged work: warren's git does not run there.
    const unmerged = await hasUnmergedWork(wt).catch((err: unknown) => {
      if (err instanceof RepositoryRefused) return true;
      throw err;
    });
    if (unmerged) {
      kept.push(wt.path);
      continue;
    }
    await removeWorktree(wt);
    await markRemoved(db, row.id);
  }
  return kept;
}
