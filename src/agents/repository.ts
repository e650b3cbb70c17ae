// The repository around a directory, read from its files as git finds it (no git process), for
// the usual layouts only: a worktree fork should cost at most one `git worktree add` beyond a
// plain fork, and a `git rev-parse` spawn is 4-10 ms. Anything unusual answers "ask git".
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

/** A file's text, or undefined when there is no such file (any other failure throws). */
function readIfThere(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}
