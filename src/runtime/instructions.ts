// Instruction files (SPEC section 9): the global AGENTS.md in warren's config directory, then from
// the git repository root (or the working directory outside a repository) down to the agent's
// working directory the first of AGENTS.md / CLAUDE.md in each directory, root to leaf, each under
// a line naming its path, 32 KiB in all. Read once per process per working directory: later
// requests get the cached text at once and a background check (stat, at most every few seconds)
// replaces it when a file appeared, went or changed (path + mtime), so no model request waits on
// the disk more than once. Each file is used only as the person accepted it (config/
// accepted-files.ts): one an agent wrote or changed is left out (its accepted content is used)
// and listed in `changes`, which runtime/file-changes.ts asks the person about.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { repositoryRoot, warrenConfigDir } from "../paths.js";
import { acceptedStamp, readText, viewOf, type FileChange } from "../config/accepted-files.js";

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
  /** Files that differ from what the person accepted: left out of `text` until accepted. */
  changes: FileChange[];
}

/** Every candidate that exists, as read: what the person's acceptance is applied to. */
interface RawFile {
  path: string;
  mtimeMs: number;
  content: string;
}

interface Entry {
  raw: Map<string, RawFile>;
  /** The last view composed, of this `raw` under the store as it was (`stamp`). */
  composed?: { raw: Map<string, RawFile>; stamp: string; value: Instructions };
  /** The candidate paths looked at, in order: what a recheck stats again. */
  candidates: string[][];
  checkedAt: number;
  checking: boolean;
  /** The background check under way, if any (tests await it). */
  recheck?: Promise<void>;
}

const cache = new Map<string, Entry>();

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

function readRaw(candidates: string[][]): Map<string, RawFile> {
  const raw = new Map<string, RawFile>();
  for (const file of candidates.flat()) {
    const stat = statFile(file);
    if (!stat) continue;
    const content = readText(file);
    if (content !== null) raw.set(file, { path: file, mtimeMs: stat.mtimeMs, content });
  }
  return raw;
}

/** The accepted view of what was read: per directory the first name with usable content wins. */
function compose(candidates: string[][], raw: Map<string, RawFile>, env: Env): Instructions {
  const files: InstructionFile[] = [];
  const parts: string[] = [];
  const changes: FileChange[] = [];
  for (const names of candidates) {
    let found = false;
    for (const file of names) {
      const seen = raw.get(file);
      const view = viewOf(file, seen?.content ?? null, "instructions", env);
      if (view.change) changes.push(view.change);
      if (found || view.use === null) continue;
      found = true;
      files.push({ path: file, mtimeMs: seen?.mtimeMs ?? 0 });
      parts.push(`Instructions from ${file}:\n${view.use.trimEnd()}`);
    }
  }
  return { files, text: joinCapped(parts), changes };
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
  for (const file of entry.candidates.flat()) {
    let stat: fs.Stats | undefined;
    try {
      stat = await fs.promises.stat(file);
    } catch {
      stat = undefined;
    }
    const known = entry.raw.get(file);
    if (stat?.isFile() ? known?.mtimeMs !== stat.mtimeMs : known !== undefined) return true;
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
    const raw = readRaw(candidates);
    cache.set(key, { raw, candidates, checkedAt: Date.now(), checking: false });
    return compose(candidates, raw, env);
  }
  if (!entry.checking && Date.now() - entry.checkedAt >= recheckMs) {
    entry.checking = true;
    entry.recheck = changed(entry)
      .then((yes) => {
        if (yes) entry.raw = readRaw(entry.candidates);
      })
      .catch(() => undefined)
      .finally(() => {
        entry.checking = false;
        entry.checkedAt = Date.now();
      });
  }
  // Composed again when the files or the store changed: an acceptance counts at the next request.
  const stamp = acceptedStamp(env);
  const last = entry.composed;
  if (last && last.raw === entry.raw && last.stamp === stamp) return last.value;
  const value = compose(entry.candidates, entry.raw, env);
  entry.composed = { raw: entry.raw, stamp, value };
  return value;
}

/** Every file an agent in `cwd` may read instructions from, existing or not (start acceptance). */
export function instructionCandidates(cwd: string, env: Env = process.env): string[] {
  return candidatesFor(cwd, env).flat();
}

/** One line naming the instruction files an agent in `cwd` reads (first screen, `warren doctor`). */
export function instructionFilesLine(cwd: string, env: Env = process.env): string {
  const { files, changes } = instructionsFor(cwd, env);
  const home = env.HOME || os.homedir();
  const shown = (file: string) =>
    home && file.startsWith(home + path.sep) ? `~${file.slice(home.length)}` : file;
  // Changed since the person accepted them: named, so that "read" never hides "not as it is".
  const waiting = changes.length
    ? `; changed, used as you accepted them until you accept the change: ${changes.map((c) => shown(c.file)).join(", ")}`
    : "";
  if (files.length === 0) return `instructions: no AGENTS.md or CLAUDE.md found${waiting}`;
  return `instructions: ${files.map((f) => shown(f.path)).join(", ")}${waiting}`;
}

/** The background check for `cwd` under way, if any (tests). */
export async function instructionsRechecked(cwd: string, env: Env = process.env): Promise<void> {
  await cache.get(`${warrenConfigDir(env)}\0${path.resolve(cwd)}`)?.recheck;
}

/** Forgets what was read (tests). */
export function clearInstructionsCache(): void {
  cache.clear();
}
