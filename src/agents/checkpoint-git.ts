// A checkpoint of a working directory inside a git repository (issue 43): the files git would not
// ignore, tracked and untracked, written as a tree through a temporary index (GIT_INDEX_FILE), so
// the repository's own index, HEAD and branches are left as they are; kept as a commit under a
// hidden ref, like Codex's ghost commits. Every run is the hardened one of repository.ts: no
// hooks, fsmonitor, signing or repository-defined filter drivers.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Repository } from "./repository.js";

/** Who warren's checkpoint commits are by: never the person's identity, never a config lookup. */
const IDENTITY = {
  GIT_AUTHOR_NAME: "warren",
  GIT_AUTHOR_EMAIL: "warren@localhost",
  GIT_COMMITTER_NAME: "warren",
  GIT_COMMITTER_EMAIL: "warren@localhost",
};

export interface Snapshot {
  tree: string;
  /** Changed or new files left out for their size, relative to the top of the working tree. */
  skipped: string[];
}

/** A pathspec that names exactly `file` from the top of the working tree (no glob, no magic). */
const literal = (file: string, exclude = false) =>
  `:(top,literal${exclude ? ",exclude" : ""})${file}`;

/**
 * Runs `body` with a temporary index outside the repository (warren writes inside `.git` only
 * through git), seeded from the repository's own index when `seed`: git then hashes only files
 * whose stat data changed since the index last saw them.
 */
async function withTempIndex<T>(
  git: Repository,
  seed: boolean | string,
  body: (env: NodeJS.ProcessEnv) => Promise<T>,
  keep?: string,
): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warren-checkpoint-"));
  const index = path.join(dir, "index");
  try {
    const from = typeof seed === "string" && fs.existsSync(seed) ? seed : seed ? git.index : null;
    if (from && fs.existsSync(from)) {
      fs.copyFileSync(from, index);
      // The copy keeps the index's mtime: git compares it with the files' to spot "racy" entries.
      const st = fs.statSync(from);
      fs.utimesSync(index, st.atime, st.mtime);
    }
    const result = await body({ GIT_INDEX_FILE: index });
    if (keep) {
      // The agent's own index for its next checkpoint: only files changed since are hashed.
      fs.mkdirSync(path.dirname(keep), { recursive: true, mode: 0o700 });
      fs.renameSync(index, keep);
    }
    return result;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The NUL-separated list git printed, without the empty tail. */
function nulList(text: string): string[] {
  return text.split("\0").filter((p) => p !== "");
}

/**
 * The tree of the working directory as it is now (files over `maxFileBytes` left out). `index`:
 * an index of the agent's own, outside the repository, kept from its previous checkpoint (else
 * the repository's is the seed), so git hashes only what changed since. `base`: the previous
 * checkpoint's tree (else HEAD): what changed against it is listed (`changed`), and only those
 * files can be new large ones, so the working tree is scanned once (by `git add -A`).
 * `knownLarge`: files skipped last time, left out of the add while they are still large.
 */
export function snapshotTree(
  git: Repository,
  maxFileBytes: number,
  options: { index?: string; base?: string; knownLarge?: string[] } = {},
): Promise<Snapshot & { changed: string[] }> {
  const large = (file: string) => {
    const st = fs.lstatSync(path.join(git.top, file), { throwIfNoEntry: false });
    return !!st?.isFile() && st.size > maxFileBytes;
  };
  return withTempIndex(
    git,
    options.index ?? true,
    async (env) => {
      const still = (options.knownLarge ?? []).filter(large);
      const excluded = still.map((f) => literal(f, true));
      await git.ok(["add", "-A", "--", ":/", ...excluded], undefined, env);
      const base = options.base ?? git.head;
      const changed = base
        ? nulList(
            await git.ok(
              ["diff-index", "--cached", "-z", "--no-renames", "--name-only", base, "--"],
              undefined,
              env,
            ),
          )
        : nulList(await git.ok(["ls-files", "-z", "--cached"], undefined, env));
      const skipped = [...new Set([...still, ...changed.filter(large)])];
      if (skipped.length > 0) {
        // A large tracked file would otherwise keep its older version from the seed index.
        const named = skipped.map((f) => literal(f));
        await git.ok(["rm", "-q", "--cached", "--ignore-unmatch", "--", ...named], undefined, env);
      }
      const tree = await git.ok(["write-tree"], undefined, env);
      return {
        tree,
        skipped: skipped.sort(),
        changed: changed.filter((f) => !skipped.includes(f)),
      };
    },
    options.index,
  );
}

/** A commit of `tree` (HEAD its parent, when there is one) kept reachable by `ref`. */
export async function commitCheckpoint(
  git: Repository,
  tree: string,
  ref: string,
  message: string,
): Promise<string> {
  const parent = git.head ? ["-p", git.head] : [];
  const commit = await git.ok(["commit-tree", tree, ...parent, "-m", message], undefined, IDENTITY);
  await git.ok(["update-ref", ref, commit]);
  return commit;
}

/** The files that differ between two trees (or commits), relative to the top. */
export async function changedBetween(git: Repository, from: string, to: string): Promise<string[]> {
  const out = await git.ok(["diff-tree", "-r", "-z", "--no-renames", "--name-only", from, to]);
  return nulList(out);
}

/** What a restore did, relative to the top of the working tree. */
export interface Restored {
  written: string[];
  removed: string[];
}

/**
 * Puts the working directory back to `commit`'s files: files that differ are written from it,
 * files it lacks are removed (those created since), files it has that are gone come back. Files
 * that match, ignored files and files over the size limit (left out of both sides) are not
 * touched. Idempotent: run again after a crash half way, it finishes (a second run finds nothing
 * to do).
 */
export async function restoreTree(
  git: Repository,
  commit: string,
  maxFileBytes: number,
  afterRemove?: () => void | Promise<void>,
): Promise<Restored> {
  const gone = await git.run(["cat-file", "-e", `${commit}^{tree}`]);
  if (gone.code !== 0) {
    throw new Error(
      `the checkpoint's commit ${commit.slice(0, 12)} is no longer in ${git.common} (deleted or garbage-collected)`,
    );
  }
  const now = await snapshotTree(git, maxFileBytes);
  const diff = nulList(
    await git.ok(["diff-tree", "-r", "-z", "--no-renames", "--name-status", now.tree, commit]),
  );
  const write: string[] = [];
  const remove: string[] = [];
  for (let i = 0; i + 1 < diff.length; i += 2) {
    const status = diff[i]!;
    const file = diff[i + 1]!;
    if (status === "D") remove.push(file);
    else write.push(file);
  }
  for (const file of remove) removeFile(git.top, file);
  await afterRemove?.();
  if (write.length > 0) {
    await withTempIndex(git, false, async (env) => {
      await git.ok(["read-tree", commit], undefined, env);
      for (let i = 0; i < write.length; i += 500) {
        const chunk = write.slice(i, i + 500);
        await git.ok(["checkout-index", "-f", "-q", "--", ...chunk], undefined, env);
      }
    });
  }
  return { written: write, removed: remove };
}

/**
 * Removes `file` (relative to `top`) and the directories it leaves empty, never through a
 * symlinked directory on the way (the link itself is a file and is removed as one).
 */
function removeFile(top: string, file: string): void {
  const parts = file.split("/");
  let dir = top;
  for (const part of parts.slice(0, -1)) {
    if (part === ".." || part === "." || part === "") return;
    dir = path.join(dir, part);
    const st = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (!st?.isDirectory()) return;
  }
  fs.rmSync(path.join(dir, parts[parts.length - 1]!), { force: true });
  for (let at = dir; at !== top && at.startsWith(top + path.sep); at = path.dirname(at)) {
    try {
      fs.rmdirSync(at);
    } catch {
      return;
    }
  }
}
