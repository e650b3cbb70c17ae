// A checkpoint of a working directory inside a git repository (issue 43): the files git would not
// ignore, tracked and untracked, added with git itself to a temporary index (GIT_INDEX_FILE), so
// the repository's own index, HEAD and branches are left as they are, and committed in a vault:
// a bare git directory of the agent's own under warren's home, which the sandbox hides, whose
// objects borrow the repository's (objects/info/alternates). One ref there; each checkpoint's
// commit has the previous one as its parent, so that ref keeps them all. Every run is
// the hardened one of repository.ts: no hooks, fsmonitor, signing or repository-defined drivers.
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { initBare, type Repository } from "./repository.js";

/** Who warren's checkpoint commits are by: never the person's identity, never a config lookup. */
const IDENTITY = {
  GIT_AUTHOR_NAME: "warren",
  GIT_AUTHOR_EMAIL: "warren@localhost",
  GIT_COMMITTER_NAME: "warren",
  GIT_COMMITTER_EMAIL: "warren@localhost",
};

/** Where an agent's checkpoints are kept. */
export interface Vault {
  /** Its git directory, under warren's home. */
  dir: string;
  /** The ref its HEAD names: the newest checkpoint, the older ones its ancestors. */
  ref: string;
}

/** The vault's ref of `agentId`'s checkpoints. */
export const vaultRef = (agentId: string) => `refs/warren/checkpoints/${agentId}`;

/** The environment that has git read and write objects in the vault (and read the repository's). */
const inVault = (vault: Vault, env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  ...env,
  GIT_OBJECT_DIRECTORY: path.join(vault.dir, "objects"),
});

/**
 * The vault at `dir` for `git`'s repository, made the first time: `git init --bare` of the
 * repository's object format, its objects borrowing the repository's, its HEAD naming `ref`.
 * Made aside and renamed into place, so a vault that exists is whole.
 */
export async function openVault(git: Repository, dir: string, agentId: string): Promise<Vault> {
  const vault = { dir, ref: vaultRef(agentId) };
  if (fs.existsSync(path.join(dir, "HEAD"))) return vault;
  fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o700 });
  const aside = `${dir}.new-${randomUUID()}`;
  try {
    await initBare(aside, await git.ok(["rev-parse", "--show-object-format"]));
    fs.writeFileSync(
      path.join(aside, "objects", "info", "alternates"),
      `${path.join(git.common, "objects")}\n`,
    );
    await git.runIn(aside, ["symbolic-ref", "HEAD", vault.ref]);
    // The 256 directories loose objects are splayed over (gitrepository-layout), made up front:
    // git then writes a checkpoint's new trees and blobs in about half the time (measured: a
    // write-tree of 10 changed files, 15 ms against 28 ms in a vault without them).
    for (let i = 0; i < 256; i++) {
      fs.mkdirSync(path.join(aside, "objects", i.toString(16).padStart(2, "0")));
    }
    fs.renameSync(aside, dir);
  } catch (err) {
    if (!fs.existsSync(path.join(dir, "HEAD"))) throw err;
  } finally {
    fs.rmSync(aside, { recursive: true, force: true });
  }
  return vault;
}

/** A pathspec that names exactly `file` from the top of the working tree (no glob, no magic). */
const literal = (file: string, exclude = false) =>
  `:(top,literal${exclude ? ",exclude" : ""})${file}`;

/** The NUL-separated list git printed, without the empty tail. */
function nulList(text: string): string[] {
  return text.split("\0").filter((p) => p !== "");
}

/** The NUL-separated list a git run prints, untrimmed (a name may begin with a space). */
async function listed(
  git: Repository,
  args: string[],
  env: NodeJS.ProcessEnv,
  gitDir?: string,
): Promise<string[]> {
  const r = gitDir ? await git.runIn(gitDir, args, env) : await git.run(args, env);
  if (r.code !== 0) throw new Error(r.stderr.split("\n")[0] || `git ${args[0]} failed`);
  return nulList(r.stdout);
}

/** Whether `file` (relative to `top`) is a regular file larger than `max` bytes. */
const largeIn = (top: string, max: number) => (file: string) => {
  const st = fs.lstatSync(path.join(top, file), { throwIfNoEntry: false });
  return !!st?.isFile() && st.size > max;
};

/** Which file an index is: git replaces it (a new inode) whenever it writes it. */
function identity(file: string): string {
  const st = fs.statSync(file, { bigint: true });
  return `${st.ino}:${st.mtimeNs}:${st.size}`;
}

/**
 * Runs `body` with a temporary index outside the repository (warren writes inside `.git` only
 * through git), a copy of `seed` when there is one: git then hashes only files whose stat data
 * changed since that index last saw them.
 */
async function withTempIndex<T>(
  seed: string | null,
  body: (index: string, env: NodeJS.ProcessEnv) => Promise<T>,
): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warren-checkpoint-"));
  const index = path.join(dir, "index");
  try {
    if (seed && fs.existsSync(seed)) {
      fs.copyFileSync(seed, index);
      // The copy keeps the index's mtime: git compares it with the files' to spot "racy" entries.
      const st = fs.statSync(seed);
      fs.utimesSync(index, st.atime, st.mtime);
    }
    return await body(index, { GIT_INDEX_FILE: index });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The vault's own index, kept from its last checkpoint, and what it holds. */
const keptIndex = (vault: Vault) => path.join(vault.dir, "warren-index");
const keptState = (vault: Vault) => path.join(vault.dir, "warren-index.json");

interface KeptState {
  /** The working tree it is an index of. */
  top: string;
  /** The checkpoint whose tree it holds. */
  commit: string;
}

function readState(vault: Vault): KeptState | undefined {
  try {
    return JSON.parse(fs.readFileSync(keptState(vault), "utf8")) as KeptState;
  } catch {
    return undefined;
  }
}

/**
 * The parent of the vault's next checkpoint: its newest (so its ref keeps every one), else HEAD.
 * The state file says which without a git run; when it is gone, git is asked.
 */
async function parentOf(git: Repository, vault: Vault, state: KeptState | undefined) {
  if (state) return state.commit;
  const newest = await git.runIn(vault.dir, ["rev-parse", "--verify", "-q", vault.ref]);
  return newest.code === 0 ? newest.stdout.trim() : git.head;
}

export interface Taken {
  commit: string;
  tree: string;
  /** Changed or new files left out for their size, relative to the top of the working tree. */
  skipped: string[];
  /** The files that differ from `previous` (null: there is none, or it is gone). */
  changed: string[] | null;
  /** The vault's ref written: await it with the row. */
  pinned: Promise<void>;
}

/**
 * Checkpoints the working tree now, files over `maxFileBytes` left out: `git add -A` to a copy of
 * the vault's own index (else the repository's); then at once `write-tree` and the files that
 * differ from `previous` (else HEAD), of which only can a file be newly large; then
 * `commit-tree` (its parent the vault's last checkpoint, else HEAD), and `update-ref` of the
 * vault's ref, left running (`pinned`). `previous`: the agent's last checkpoint of this working tree; when git did not
 * even rewrite the index, the directory is as it was then and `unchanged` is returned (no
 * commit; `skipped` as now). `knownLarge`: files skipped last time, left out of the add while
 * they are still large. The same tree as `previous` is `unchanged` too.
 */
export async function checkpointTree(
  git: Repository,
  vault: Vault,
  maxFileBytes: number,
  options: { message: string; previous?: { commit: string; tree: string }; knownLarge: string[] },
): Promise<Taken | { unchanged: true; skipped: string[] }> {
  const large = largeIn(git.top, maxFileBytes);
  const state = readState(vault);
  // The kept index is of one working tree (an agent's directory may move).
  const kept = state?.top === git.top && fs.existsSync(keptIndex(vault)) ? state : undefined;
  return withTempIndex(kept ? keptIndex(vault) : git.index, async (index, indexEnv) => {
    const env = inVault(vault, indexEnv);
    const still = options.knownLarge.filter(large);
    const seen = fs.existsSync(index) ? identity(index) : null;
    await git.ok(["add", "-A", "--", ":/", ...still.map((f) => literal(f, true))], undefined, env);
    const previous = options.previous;
    if (kept && kept.commit === previous?.commit && identity(index) === seen) {
      return { unchanged: true, skipped: still.sort() };
    }
    // Seeded from the repository's index, a large tracked file would keep its version there.
    if (!kept && still.length > 0) await forget(git, env, still);
    // write-tree rewrites the index only by renaming a new one in: the diff reads either whole.
    const [first, since] = await Promise.all([
      writeTree(git, env),
      changedSince(git, env, previous?.commit),
    ]);
    const newlyLarge = since.files.filter(large);
    if (newlyLarge.length > 0) await forget(git, env, newlyLarge);
    const tree = newlyLarge.length > 0 ? await writeTree(git, env) : first;
    const keep = (commit: string) => {
      fs.renameSync(index, keptIndex(vault));
      const state: KeptState = { top: git.top, commit };
      fs.writeFileSync(keptState(vault), JSON.stringify(state));
    };
    if (previous && tree === previous.tree) {
      // Rewritten for its stat data alone ("racy" entries hashed again): the same files.
      keep(previous.commit);
      return { unchanged: true, skipped: [...new Set([...still, ...newlyLarge])].sort() };
    }
    const commitOn = (parent: string | undefined) =>
      git.ok(
        ["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", options.message],
        undefined,
        inVault(vault, IDENTITY),
      );
    // A parent deleted from the repository (a checkpoint of before the vaults) must not stop
    // every later checkpoint: the chain starts again from HEAD.
    const commit = await commitOn(await parentOf(git, vault, state)).catch(() =>
      commitOn(git.head),
    );
    keep(commit);
    // The ref is written while the caller writes its row: until then the commit is kept by the
    // next checkpoint's parent too, and nothing collects garbage in a vault.
    const pinned = git.ok(["update-ref", vault.ref, commit], undefined, {}, vault.dir);
    pinned.catch(() => undefined);
    return {
      commit,
      tree,
      pinned: pinned.then(() => undefined),
      skipped: [...new Set([...still, ...newlyLarge])].sort(),
      changed: since.fromPrevious ? since.files.filter((f) => !newlyLarge.includes(f)) : null,
    };
  });
}

/**
 * The tree of the temporary index. `--missing-ok`: git would otherwise look up every blob of each
 * directory that changed, through the vault and then the repository's objects (half the run's
 * time, measured: 9 ms against 20 ms for 20 changed directories of 100 files). The blobs are ones
 * `git add` just wrote to the vault or ones the index already named; a repository blob bash
 * deleted since (`gc --prune=now` after unstaging) was only ever caught for a changed directory,
 * and a rewind that needs it fails in one line (restoreTree).
 */
const writeTree = (git: Repository, env: NodeJS.ProcessEnv) =>
  git.ok(["write-tree", "--missing-ok"], undefined, env);

/**
 * The files of the temporary index that differ from `previous` (`fromPrevious`), else (none, or
 * it is gone) from HEAD, else all of them: wherever a newly large file can be.
 */
async function changedSince(
  git: Repository,
  env: NodeJS.ProcessEnv,
  previous: string | undefined,
): Promise<{ files: string[]; fromPrevious: boolean }> {
  const against = (base: string) =>
    listed(git, ["diff-index", "--cached", "-z", "--no-renames", "--name-only", base, "--"], env);
  if (previous) {
    const files = await against(previous).catch(() => null);
    if (files) return { files, fromPrevious: true };
  }
  const files = await (git.head
    ? against(git.head)
    : listed(git, ["ls-files", "-z", "--cached"], env));
  return { files, fromPrevious: false };
}

/** Takes `files` out of the temporary index (left out of the checkpoint). */
async function forget(git: Repository, env: NodeJS.ProcessEnv, files: string[]) {
  const named = files.map((f) => literal(f));
  await git.ok(["rm", "-q", "--cached", "--ignore-unmatch", "--", ...named], undefined, env);
}

/** The files that differ between two trees (or commits) of the vault, relative to the top. */
export async function changedBetween(
  git: Repository,
  vault: Vault,
  from: string,
  to: string,
): Promise<string[]> {
  const args = ["diff-tree", "-r", "-z", "--no-renames", "--name-only", from, to];
  return listed(git, args, inVault(vault));
}

/**
 * The tree of the working directory as it is now, in the vault, for a restore to compare: files
 * over `maxFileBytes` that changed since HEAD are left out, as a checkpoint leaves them out.
 */
async function treeNow(git: Repository, vault: Vault, maxFileBytes: number): Promise<string> {
  const large = largeIn(git.top, maxFileBytes);
  return withTempIndex(git.index, async (_index, env) => {
    await git.ok(["add", "-A", "--", ":/"], undefined, inVault(vault, env));
    const changed = git.head
      ? ["diff-index", "--cached", "-z", "--no-renames", "--name-only", git.head, "--"]
      : ["ls-files", "-z", "--cached"];
    const skipped = (await listed(git, changed, inVault(vault, env))).filter(large);
    if (skipped.length > 0) await forget(git, inVault(vault, env), skipped);
    return git.ok(["write-tree"], undefined, inVault(vault, env));
  });
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
  vault: Vault,
  commit: string,
  maxFileBytes: number,
  afterRemove?: () => void | Promise<void>,
): Promise<Restored> {
  const gone = await git.run(["cat-file", "-e", `${commit}^{tree}`], inVault(vault));
  if (gone.code !== 0) {
    throw new Error(
      `the checkpoint's commit ${commit.slice(0, 12)} is in neither ${vault.dir} nor ${git.common} (deleted, garbage-collected, or taken under another WARREN_HOME)`,
    );
  }
  const now = await treeNow(git, vault, maxFileBytes);
  const diff = await listed(
    git,
    ["diff-tree", "-r", "-z", "--no-renames", "--name-status", now, commit],
    inVault(vault),
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
    await withTempIndex(null, async (_index, env) => {
      await git.ok(["read-tree", commit], undefined, inVault(vault, env));
      for (let i = 0; i < write.length; i += 500) {
        const chunk = write.slice(i, i + 500);
        await git.ok(
          ["checkout-index", "-f", "-q", "--", ...chunk],
          undefined,
          inVault(vault, env),
        );
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
