// Where skills and command files are looked for (SPEC section 9), the person's own folders first:
// a project's file (which an agent may have written) never shadows one of theirs. Project folders
// are looked for from the working directory up to the repository root (else the working
// directory alone), nearest first. A project's files are held until the person trusts them
// (`warren trust`, `/trust`), as its settings files are: a cloned repository's skill is instructions
// to the model, and its command file's !`cmd` a command.
import os from "node:os";
import path from "node:path";
import { repositoryRoot } from "../paths.js";
import {
  isAllowed,
  storeStamp,
  trustGate,
  trustStorePath,
  type ProjectAllow,
} from "../trust-store.js";

type Env = Record<string, string | undefined>;

export interface Source {
  dir: string;
  /** How the source is named in listings: "~/.claude/skills", ".claude/skills". */
  label: string;
  /** The person's own folder (home), or the project's. */
  scope: "user" | "project";
}

export function homeOf(env: Env): string {
  return env.HOME || os.homedir();
}

/** The project's root for `cwd`: the repository root, else `cwd` itself. */
export function projectRoot(cwd: string): string {
  return repositoryRoot(cwd) ?? path.resolve(cwd);
}

/** `cwd` and each directory above it up to the project root, nearest first. */
function upToRoot(cwd: string): string[] {
  const top = projectRoot(cwd);
  const dirs: string[] = [];
  for (let d = path.resolve(cwd); ; d = path.dirname(d)) {
    dirs.push(d);
    if (d === top || path.dirname(d) === d) break;
  }
  return dirs;
}

/**
 * Each folder once, the person's (`user` relative to home) first, then `.warren/<own>` at the
 * project root, then the `project` names in every directory from `cwd` up to the root.
 */
export function sourcesFor(
  cwd: string,
  env: Env,
  names: { user: string[]; own: string; project: string[] },
): Source[] {
  const home = homeOf(env);
  const out: Source[] = names.user.map((rel) => ({
    dir: path.join(home, rel),
    label: `~/${rel}`,
    scope: "user" as const,
  }));
  const root = projectRoot(cwd);
  out.push({ dir: path.join(root, names.own), label: names.own, scope: "project" });
  for (const dir of upToRoot(cwd)) {
    for (const rel of names.project) {
      const where = path.relative(root, dir);
      out.push({
        dir: path.join(dir, rel),
        label: where ? path.join(where, rel) : rel,
        scope: "project",
      });
    }
  }
  const seen = new Set<string>();
  return out.filter((s) => (seen.has(s.dir) ? false : (seen.add(s.dir), true)));
}

/** `file` shown with `~` for the home directory. */
export function shownPath(file: string, env: Env): string {
  const home = homeOf(env);
  return home && file.startsWith(home + path.sep) ? `~${file.slice(home.length)}` : file;
}

/** A project's skill or command file waiting for the person's trust, as it was read. */
export interface HeldFile {
  file: string;
  gate: ProjectAllow;
}

/**
 * Whether `file` of `source`, holding `text`, waits for trust (a project's file not trusted as it
 * is now); one that does is added to `held`. The person's own files never wait.
 */
export function heldForTrust(
  source: Source,
  file: string,
  text: string,
  env: Env,
  held: HeldFile[],
): boolean {
  if (source.scope === "user") return false;
  const gate = trustGate(file, text, env);
  if (isAllowed(gate)) return false;
  held.push({ file, gate });
  return true;
}

const caches: Map<string, unknown>[] = [];
const RESCAN_MS = 2000;

/**
 * `scan` remembered per home and working directory: read again once `rescanMs` passed, and at
 * once when the person trusted something since (a file trusted mid-session counts from the next
 * turn). For what is looked up on every tool call (runtime/skill-scope.ts).
 */
export function rescanned<T>(
  scan: (cwd: string, env: Env) => T,
): (cwd: string, env: Env, rescanMs?: number) => T {
  const cache = new Map<string, { at: number; trust: string; set: T }>();
  caches.push(cache);
  return (cwd, env, rescanMs = RESCAN_MS) => {
    const key = `${env.HOME ?? ""}\0${path.resolve(cwd)}`;
    const trust = storeStamp(trustStorePath(env));
    const hit = cache.get(key);
    if (hit && hit.trust === trust && Date.now() - hit.at < rescanMs) return hit.set;
    const set = scan(cwd, env);
    cache.set(key, { at: Date.now(), trust, set });
    return set;
  };
}

/** Forgets every `rescanned` read (tests). */
export function clearRescanned(): void {
  for (const cache of caches) cache.clear();
}
