// What the file tools never read, list or write, whatever the working directory and however the
// path is spelt (SPEC §3): the sandbox's hidden set (sandbox/launch.ts hiddenPaths: warren's home,
// its config file, libpq's password and service files). A path is hidden when it lies in one of
// them as given or resolved (`..`, symbolic links), or when it or a directory above it IS one of
// them by identity (device and inode, recorded when this thread first looked): a renamed parent
// (`mv ~/.config ~/.config-x`) or a hard link leads to the same inode under another name.
import fs from "node:fs";
import path from "node:path";
import { hiddenPaths } from "../sandbox/launch.js";

type Env = Record<string, string | undefined>;

/** Entries recorded directly inside a hidden folder (for hard links to what lies in it). */
const RECORD_MAX = 200;

export interface HiddenSet {
  /** The hidden paths, as given and resolved. */
  paths: string[];
  /** `dev:ino` of each hidden path, and of what lay directly inside the hidden folders. */
  ids: Set<string>;
}

const idOf = (st: fs.Stats): string => `${st.dev}:${st.ino}`;

function idAt(p: string): string | undefined {
  try {
    return idOf(fs.lstatSync(p));
  } catch {
    return undefined;
  }
}

/** Each hidden path's identity, and those of the entries directly inside the folders (bounded). */
function identities(paths: readonly string[]): Map<string, string> {
  const ids = new Map<string, string>();
  for (const p of paths) {
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      continue;
    }
    ids.set(p, idOf(st));
    if (!st.isDirectory()) continue;
    let names: string[];
    try {
      names = fs.readdirSync(p).slice(0, RECORD_MAX);
    } catch {
      continue;
    }
    for (const name of names) {
      const id = idAt(path.join(p, name));
      if (id) ids.set(path.join(p, name), id);
    }
  }
  return ids;
}

/** By the hidden paths (one set per environment): the identities first recorded, by path. */
const recorded = new Map<string, Map<string, string>>();

function pathsOf(env: Env, extraConfig?: string): string[] {
  const given = hiddenPaths(env, extraConfig);
  const out = new Set(given);
  for (const p of given) {
    try {
      out.add(fs.realpathSync(p));
    } catch {
      // not there (yet): its given path is enough
    }
  }
  return [...out];
}

/**
 * Records the hidden set's identities now (once per set of paths and thread): called when the
 * file tools load, so a parent renamed later by an agent's bash still leads to a known inode.
 */
export function rememberHidden(env: Env = process.env, extraConfig?: string): void {
  const paths = pathsOf(env, extraConfig);
  const key = paths.join("\u0000");
  if (!recorded.has(key)) recorded.set(key, identities(paths));
}

/**
 * The hidden set now: its paths, the identities found there now, and those first recorded whose
 * path is gone (moved away: still the same file). One whose path now holds another file (warren
 * replaced it, e.g. the MCP allow store) is dropped: its inode may be reused by any new file.
 */
export function hiddenSet(env: Env = process.env, extraConfig?: string): HiddenSet {
  const paths = pathsOf(env, extraConfig);
  const key = paths.join("\u0000");
  let first = recorded.get(key);
  if (!first) {
    first = identities(paths);
    recorded.set(key, first);
  }
  const ids = new Set(identities(paths).values());
  for (const [p, id] of first) if (idAt(p) === undefined) ids.add(id);
  return { paths, ids };
}

function inside(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return !(rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel));
}

/**
 * Whether `absolute` (as given, made absolute) or `real` (resolved) lies in the hidden set: by
 * path, or by the identity of `real` or a directory above it.
 */
export function isHidden(set: HiddenSet, absolute: string, real: string = absolute): boolean {
  if (set.paths.some((h) => inside(h, absolute) || inside(h, real))) return true;
  for (let at = real; ; at = path.dirname(at)) {
    try {
      if (set.ids.has(idOf(fs.statSync(at)))) return true;
    } catch {
      // not there (a file about to be written): its parents still count
    }
    if (path.dirname(at) === at) return false;
  }
}

/** Whether an open file is one of the hidden set's files under another name (a hard link). */
export function isHiddenFile(set: HiddenSet, info: fs.Stats): boolean {
  return set.ids.has(idOf(info));
}

/** The one line the model reads for a hidden path. */
export function hiddenMessage(given: string): string {
  return `"${given}" is warren's own configuration or secrets (its home, config file, or a PostgreSQL password file); the file tools never read or write it`;
}

// This thread's first look: before any agent's command could rename a parent.
rememberHidden();
