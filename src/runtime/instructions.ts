// Instruction files (SPEC section 9): the global AGENTS.md in warren's config directory, then from
// the git repository root (or the working directory outside a repository) down to the agent's
// working directory the first of AGENTS.md / CLAUDE.md in each directory, root to leaf, each under
// a line naming its path, 32 KiB in all. Read once per process per working directory: later
// requests get the cached text at once and a background check (stat, at most every few seconds)
// replaces it when a file appeared, went or changed (path + mtime), so no model request waits on
// the disk more than once.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

type Env = Record<string, string | undefined>;

export const INSTRUCTIONS_CAP = 32 * 1024;
const NAMES = ["AGENTS.md", "CLAUDE.md"] as const;
const RECHECK_MS = 2000;

export interface InstructionFile {
  path: string;
  mtimeMs: number;
}

export interface Instructions {
  /** The files read, root to leaf (the global one first). */
  files: InstructionFile[];
  /** The block for the system prompt; "" when there is none. */
  text: string;
}

interface Entry {
  value: Instructions;
  /** The candidate paths looked at, in order: what a recheck stats again. */
  candidates: string[][];
  checkedAt: number;
  checking: boolean;
  /** The background check under way, if any (tests await it). */
  recheck?: Promise<void>;
}

const cache = new Map<string, Entry>();

/** warren's config directory: $XDG_CONFIG_HOME/warren, else ~/.config/warren. */
export function warrenConfigDir(env: Env = process.env): string {
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), ".config");
  return path.join(base, "warren");
}

/** The nearest directory at or above `dir` holding `.git` (a directory, or a worktree's file). */
export function repositoryRoot(dir: string): string | undefined {
  let current = path.resolve(dir);
  for (;;) {
    if (fs.existsSync(path.join(current, ".git"))) return current;
    const up = path.dirname(current);
    if (up === current) return undefined;
    current = up;
  }
}

/** Per directory, the names that may hold its instructions (the first that exists wins). */
function candidatesFor(cwd: string, env: Env): string[][] {
  const leaf = path.resolve(cwd);
  const top = repositoryRoot(leaf) ?? leaf;
  const dirs: string[] = [];
  for (let d = leaf; ; d = path.dirname(d)) {
    dirs.unshift(d);
    if (d === top || path.dirname(d) === d) break;
  }
  return [
    [path.join(warrenConfigDir(env), "AGENTS.md")],
    ...dirs.map((d) => NAMES.map((n) => path.join(d, n))),
  ];
}

function statFile(file: string): fs.Stats | undefined {
  try {
    const stat = fs.statSync(file);
    return stat.isFile() ? stat : undefined;
  } catch {
    return undefined;
  }
}

function readAll(candidates: string[][]): Instructions {
  const files: InstructionFile[] = [];
  const parts: string[] = [];
  for (const names of candidates) {
    for (const file of names) {
      const stat = statFile(file);
      if (!stat) continue;
      let body: string;
      try {
        body = fs.readFileSync(file, "utf8");
      } catch {
        continue;
      }
      files.push({ path: file, mtimeMs: stat.mtimeMs });
      parts.push(`Instructions from ${file}:\n${body.trimEnd()}`);
      break;
    }
  }
  return { files, text: joinCapped(parts) };
}

/** The parts joined, at most INSTRUCTIONS_CAP bytes (UTF-8) with the cut said. */
export function joinCapped(parts: string[], cap = INSTRUCTIONS_CAP): string {
  const text = parts.join("\n\n");
  if (Buffer.byteLength(text, "utf8") <= cap) return text;
  const note = `\n[instructions cut by warren: they are over ${cap / 1024} KiB; the rest was left out]`;
  const room = cap - Buffer.byteLength(note, "utf8");
  let kept = Buffer.from(text, "utf8").subarray(0, room).toString("utf8");
  // A character cut in two decodes as U+FFFD: drop it.
  if (kept.endsWith("\uFFFD")) kept = kept.slice(0, -1);
  return kept + note;
}

async function changed(entry: Entry): Promise<boolean> {
  const seen = new Map(entry.value.files.map((f) => [f.path, f.mtimeMs]));
  for (const names of entry.candidates) {
    for (const file of names) {
      let stat: fs.Stats | undefined;
      try {
        stat = await fs.promises.stat(file);
      } catch {
        stat = undefined;
      }
      const known = seen.get(file);
      if (stat?.isFile()) {
        // The first existing name wins: a different first name, or a new mtime, is a change.
        if (known === undefined || known !== stat.mtimeMs) return true;
        break;
      }
      if (known !== undefined) return true;
    }
  }
  return false;
}

/** The instructions for an agent working in `cwd` (cached per process; see the header). */
export function instructionsFor(
  cwd: string,
  env: Env = process.env,
  recheckMs: number = RECHECK_MS,
): Instructions {
  const key = `${warrenConfigDir(env)}\0${path.resolve(cwd)}`;
  const entry = cache.get(key);
  if (!entry) {
    const candidates = candidatesFor(cwd, env);
    const value = readAll(candidates);
    cache.set(key, { value, candidates, checkedAt: Date.now(), checking: false });
    return value;
  }
  if (!entry.checking && Date.now() - entry.checkedAt >= recheckMs) {
    entry.checking = true;
    entry.recheck = changed(entry)
      .then((yes) => {
        if (yes) entry.value = readAll(entry.candidates);
      })
      .catch(() => undefined)
      .finally(() => {
        entry.checking = false;
        entry.checkedAt = Date.now();
      });
  }
  return entry.value;
}

/** One line naming the instruction files an agent in `cwd` reads (first screen, `warren doctor`). */
export function instructionFilesLine(cwd: string, env: Env = process.env): string {
  const { files } = instructionsFor(cwd, env);
  if (files.length === 0) return "instructions: no AGENTS.md or CLAUDE.md found";
  const home = env.HOME || os.homedir();
  const shown = files.map((f) =>
    home && f.path.startsWith(home + path.sep) ? `~${f.path.slice(home.length)}` : f.path,
  );
  return `instructions: ${shown.join(", ")}`;
}

/** The background check for `cwd` under way, if any (tests). */
export async function instructionsRechecked(cwd: string, env: Env = process.env): Promise<void> {
  await cache.get(`${warrenConfigDir(env)}\0${path.resolve(cwd)}`)?.recheck;
}

/** Forgets what was read (tests). */
export function clearInstructionsCache(): void {
  cache.clear();
}
