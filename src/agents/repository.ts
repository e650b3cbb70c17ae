// The repository around a directory, read from its files as git finds it (no git process), for
// the usual layouts only: a worktree fork should cost at most one `git worktree add` beyond a
// plain fork, and a `git rev-parse` spawn is 4-10 ms. Anything unusual answers "ask git". In such
// a repository a new branch is written the same way (createBranch).
import fs from "node:fs";
import path from "node:path";

export interface Repository {
  /** The top level of the working tree, absolute and real. */
  repo: string;
  /** The common git directory (shared by linked worktrees), absolute and real. */
  common: string;
  /** HEAD's commit; undefined when HEAD's branch has no commit yet. */
  base: string | undefined;
}

export const OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** Variables that change how git finds a repository: with any set, only git answers. */
const DISCOVERY_ENV = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_COMMON_DIR",
  "GIT_CEILING_DIRECTORIES",
  "GIT_DISCOVERY_ACROSS_FILESYSTEM",
];

/** A ref kept in the common dir: under refs/, not per-worktree, no `..` nor odd component. */
const SHARED_REF =
  /^refs\/(?!worktree\/|bisect\/|rewritten\/)(?!.*\.\.)(?!.*\.(?:lock)?(?:\/|$))(?:[\w+@-][\w.+@-]*\/)*[\w+@-][\w.+@-]*$/;

/**
 * What `git rev-parse --path-format=absolute --show-toplevel --git-common-dir HEAD` would say in
 * `cwd`, or undefined when the layout is not one of those known here (a bare or reftable repository,
 * core.worktree, discovery variables, a file in an unexpected form, ...): then ask git.
 */
export function readRepository(cwd: string): Repository | undefined {
  if (DISCOVERY_ENV.some((name) => process.env[name] !== undefined)) return undefined;
  try {
    // Discovery: the nearest directory holding `.git`, not past a filesystem boundary, as git.
    let dir = fs.realpathSync(cwd);
    const dev = fs.statSync(dir).dev;
    let dotGit: fs.Stats | undefined;
    while (!(dotGit = fs.statSync(path.join(dir, ".git"), { throwIfNoEntry: false }))) {
      if (fs.existsSync(path.join(dir, "HEAD"))) return undefined; // in a git dir, or a bare one
      const up = path.dirname(dir);
      if (up === dir || fs.statSync(up).dev !== dev) return undefined;
      dir = up;
    }
    let gitdir = path.join(dir, ".git");
    let common = gitdir;
    if (dotGit.isFile()) {
      // A linked worktree or a submodule: `gitdir: <path>`, relative to the file's directory.
      const link = fs.readFileSync(gitdir, "utf8").replace(/[\r\n]+$/, "");
      if (!link.startsWith("gitdir: ") || link.length === 8) return undefined;
      gitdir = fs.realpathSync(path.resolve(dir, link.slice(8)));
      const commondir = readIfThere(path.join(gitdir, "commondir"));
      common = path.resolve(gitdir, commondir?.replace(/[\r\n]+$/, "") ?? ".");
    } else if (!dotGit.isDirectory()) return undefined;
    common = fs.realpathSync(common);

    const uid = process.getuid?.();
    const usual =
      uid !== undefined &&
      fs.statSync(dir).uid === uid && // else git may refuse it ("dubious ownership")
      fs.statSync(gitdir).uid === uid &&
      fs.statSync(path.join(common, "objects")).isDirectory() &&
      fs.statSync(path.join(common, "refs")).isDirectory() &&
      !fs.existsSync(path.join(common, "reftable"));
    if (!usual) return undefined;
    const config = fs.readFileSync(path.join(common, "config"), "utf8");
    if (/refstorage|worktree|extensions/i.test(config)) return undefined;
    if (/^\s*bare\b(?!\s*=\s*false\s*$)/im.test(config)) return undefined;

    // HEAD: an object id, or `ref: refs/...` through loose refs (maybe symbolic) and packed-refs.
    let target = fs.readFileSync(path.join(gitdir, "HEAD"), "utf8").trimEnd();
    for (let depth = 0; depth < 5; depth++) {
      if (OID.test(target)) return { repo: dir, common, base: target };
      const ref = /^ref:\s*(\S+)$/.exec(target)?.[1];
      if (!ref || !SHARED_REF.test(ref)) return undefined;
      const loose = readIfThere(path.join(common, ref));
      if (loose !== undefined) {
        target = loose.trimEnd();
        continue;
      }
      const packed = (readIfThere(path.join(common, "packed-refs")) ?? "")
        .split("\n")
        .find((line) => !/^[#^]/.test(line) && line.endsWith(` ${ref}`));
      if (packed === undefined) return { repo: dir, common, base: undefined };
      const oid = packed.slice(0, -ref.length - 1);
      return OID.test(oid) ? { repo: dir, common, base: oid } : undefined;
    }
    return undefined;
  } catch {
    return undefined;
  }
}

/**
 * Creates branch `name` at `oid` in a repository `readRepository` read (refs kept in files), as
 * git writes a loose ref: under its lock file, then renamed into place. `git worktree add -b`
 * would run `git branch` for it, a process of its own (a tenth of the add's time on this
 * project's machine). False, with nothing written, whenever git should decide instead: the name
 * or a ref above or below it exists (loose or packed), its lock is held, or a write fails.
 * Unlike `git branch`, it writes no reflog entry and runs no reference-transaction hook.
 */
export function createBranch(common: string, name: string, oid: string): boolean {
  const ref = `refs/heads/${name}`;
  if (!SHARED_REF.test(ref) || !OID.test(oid)) return false;
  // A shared repository's files get group or world permissions from git: left to git.
  if (/sharedrepository/i.test(readIfThere(path.join(common, "config")) ?? "")) return false;
  const packed = readIfThere(path.join(common, "packed-refs")) ?? "";
  const parts = ref.split("/");
  for (let i = 3; i <= parts.length; i++) {
    const above = parts.slice(0, i).join("/");
    if (packed.includes(` ${above}\n`) || (i < parts.length && isFile(path.join(common, above)))) {
      return false;
    }
  }
  if (packed.includes(` ${ref}/`)) return false;
  const file = path.join(common, ref);
  const lock = `${file}.lock`;
  let locked = false;
  try {
    if (fs.existsSync(file)) return false;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const fd = fs.openSync(lock, "wx");
    locked = true;
    try {
      // Held: another writer could only have made it before the lock was taken.
      if (fs.existsSync(file)) return false;
      fs.writeSync(fd, `${oid}\n`);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(lock, file);
    locked = false;
    return true;
  } catch {
    return false;
  } finally {
    if (locked) fs.rmSync(lock, { force: true });
  }
}

/**
 * Writes the entry of a linked worktree at `wtPath` on `branch`, as `git worktree add` does before
 * it checks one out (gitrepository-layout(5): `worktrees/<id>/gitdir`, `commondir`, `HEAD`, and
 * `locked` while it is made; `<wtPath>/.git` pointing back), in a repository `readRepository`
 * read. `git worktree add` runs two git processes for this (`symbolic-ref`, `reset --hard`);
 * with the entry written, a `git reset --hard` in `wtPath` is the only one. Returns the entry's
 * directory, or undefined with nothing written when it cannot be made plainly (its name or the
 * path is taken): then git makes it.
 */
export function createWorktreeEntry(
  common: string,
  wtPath: string,
  branch: string,
): string | undefined {
  const entry = path.join(common, "worktrees", path.basename(wtPath));
  try {
    fs.mkdirSync(path.dirname(entry), { recursive: true });
    fs.mkdirSync(entry);
  } catch {
    return undefined;
  }
  let made = false;
  try {
    // Locked first, as git does: a `git worktree prune` meanwhile leaves a half-made entry alone.
    fs.writeFileSync(path.join(entry, "locked"), "initializing\n");
    fs.writeFileSync(path.join(entry, "commondir"), "../..\n");
    fs.writeFileSync(path.join(entry, "HEAD"), `ref: refs/heads/${branch}\n`);
    fs.writeFileSync(path.join(entry, "gitdir"), `${path.join(wtPath, ".git")}\n`);
    fs.mkdirSync(wtPath);
    made = true;
    fs.writeFileSync(path.join(wtPath, ".git"), `gitdir: ${entry}\n`);
    return entry;
  } catch {
    fs.rmSync(entry, { recursive: true, force: true });
    if (made) fs.rmSync(wtPath, { recursive: true, force: true });
    return undefined;
  }
}

function isFile(file: string): boolean {
  return fs.statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;
}

/** A file's text, or undefined when there is no such file (any other failure throws). */
function readIfThere(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}
