// Instruction files (SPEC section 9): the global AGENTS.md in warren's config directory, the
// person's `~/.claude/CLAUDE.md` and `~/.codex/AGENTS.md`, then from the git repository root (or
// the working directory outside a repository) down to the agent's working directory AGENTS.md and
// CLAUDE.md in each directory (both when both exist), root to leaf, each under a line naming its
// path, with Claude Code's `@path` imports (instruction-imports.ts) after the file that names
// them: relative to that file, inside the repository or the home directory, at most 5 deep, each
// file once (CLAUDE.md importing its neighbour AGENTS.md reads it once), a cycle, a miss or a
// path out of bounds one warning each. 32 KiB in all. Read once per process per working
// directory: later requests get the cached text at once and a background check (stat, at most
// every few seconds) replaces it when a file appeared, went or changed (path + mtime), so no
// model request waits on the disk more than once. Each file, an imported one too, is used only as
// the person accepted it (config/accepted-files.ts): one an agent wrote or changed is left out
// (its accepted content is used) and listed in `changes`, which runtime/file-changes.ts asks the
// person about.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { repositoryRoot, warrenConfigDir } from "../paths.js";
import { acceptedStamp, readText, viewOf, type FileChange } from "../config/accepted-files.js";
import { importPaths, resolveImport } from "./instruction-imports.js";

type Env = Record<string, string | undefined>;

export const INSTRUCTIONS_CAP = 32 * 1024;
const NAMES = ["AGENTS.md", "CLAUDE.md"] as const;
const RECHECK_MS = 2000;
/** Claude Code's limit: an import of an import … at most this many hops from a file read. */
export const MAX_IMPORT_DEPTH = 5;

export interface InstructionFile {
  path: string;
  mtimeMs: number;
  /** The file whose `@path` import brought this one in (absent: found by its name). */
  importedBy?: string;
}

export interface Instructions {
  /** The files read, in prompt order (the global ones first, imports after their importer). */
  files: InstructionFile[];
  /** The block for the system prompt; "" when there is none. */
  text: string;
  /** Files that differ from what the person accepted: left out of `text` until accepted. */
  changes: FileChange[];
  /** Imports not followed (missing, a cycle, too deep, out of bounds), one line each. */
  warnings: string[];
}

/** Every file read, as read: what the person's acceptance is applied to. */
interface RawFile {
  path: string;
  mtimeMs: number;
  content: string;
}

/** Where an agent's instructions come from: the candidates in order, and the import bounds. */
interface Plan {
  candidates: string[];
  /** Folders an import may point into: the repository (or working directory) and the home. */
  bounds: string[];
  home: string;
}

interface Entry {
  plan: Plan;
  raw: Map<string, RawFile>;
  /** Every path looked at (candidates and imports, present or not): what a recheck stats. */
  looked: Set<string>;
  /** The last view composed, of this `raw` under the store as it was (`stamp`). */
  composed?: { raw: Map<string, RawFile>; stamp: string; value: Instructions };
  checkedAt: number;
  checking: boolean;
  /** The background check under way, if any (tests await it). */
  recheck?: Promise<void>;
}

const cache = new Map<string, Entry>();

function homeOf(env: Env): string {
  return env.HOME || os.homedir();
}

/** The person's own files, then AGENTS.md and CLAUDE.md in each directory, root to leaf. */
function planFor(cwd: string, env: Env): Plan {
  const leaf = path.resolve(cwd);
  const top = repositoryRoot(leaf) ?? leaf;
  const dirs: string[] = [];
  for (let d = leaf; ; d = path.dirname(d)) {
    dirs.unshift(d);
    if (d === top || path.dirname(d) === d) break;
  }
  const home = homeOf(env);
  return {
    candidates: [
      path.join(warrenConfigDir(env), "AGENTS.md"),
      path.join(home, ".claude", "CLAUDE.md"),
      path.join(home, ".codex", "AGENTS.md"),
      ...dirs.flatMap((d) => NAMES.map((n) => path.join(d, n))),
    ],
    bounds: [top, home].map(realOrSame),
    home,
  };
}

/** The path with its symlinks resolved, or as given when it does not exist. */
function realOrSame(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

function isUnder(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

function statFile(file: string): fs.Stats | undefined {
  try {
    const stat = fs.statSync(file);
    return stat.isFile() ? stat : undefined;
  } catch {
    return undefined;
  }
}

function readInto(raw: Map<string, RawFile>, file: string): void {
  const stat = statFile(file);
  if (!stat) return;
  const content = readText(file);
  if (content !== null) raw.set(file, { path: file, mtimeMs: stat.mtimeMs, content });
}

function readRaw(paths: Iterable<string>): Map<string, RawFile> {
  const raw = new Map<string, RawFile>();
  for (const file of paths) readInto(raw, file);
  return raw;
}

function shownPath(file: string, env: Env): string {
  const home = homeOf(env);
  return home && file.startsWith(home + path.sep) ? `~${file.slice(home.length)}` : file;
}

/**
 * The accepted view of what was read. `load` gives a file's content as read (reading an import
 * the first time it is named); `accepted` decides what a prompt may use of it.
 */
function compose(
  plan: Plan,
  load: (file: string) => RawFile | undefined,
  accepted: (file: string, now: string | null) => { use: string | null; change?: FileChange },
  env: Env,
): Instructions {
  const files: InstructionFile[] = [];
  const parts: string[] = [];
  const changes: FileChange[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  const warn = (line: string) => {
    if (!warnings.includes(line)) warnings.push(line);
  };

  const visit = (file: string, chain: string[], importedBy?: string): void => {
    const read = load(file);
    const view = accepted(file, read?.content ?? null);
    if (view.change) changes.push(view.change);
    if (view.use === null) {
      if (importedBy && !view.change) {
        warn(
          `instructions: ${shownPath(importedBy, env)} imports ${shownPath(file, env)}, which is not there`,
        );
      }
      return;
    }
    const real = realOrSame(file);
    if (seen.has(real)) return;
    seen.add(real);
    files.push({ path: file, mtimeMs: read?.mtimeMs ?? 0, ...(importedBy ? { importedBy } : {}) });
    parts.push(`Instructions from ${file}:\n${view.use.trimEnd()}`);
    for (const given of importPaths(view.use)) {
      // Relative to the file itself: a symlinked ~/.claude/CLAUDE.md imports beside its target.
      const target = resolveImport(given, real, plan.home);
      const targetReal = realOrSame(target);
      const named = `${shownPath(file, env)} imports ${shownPath(target, env)}`;
      if (chain.includes(targetReal)) {
        warn(`instructions: ${named}, which imports it back (a cycle): each is read once`);
      } else if (seen.has(targetReal)) {
        continue; // read already (AGENTS.md beside the CLAUDE.md that imports it): once
      } else if (!plan.bounds.some((b) => isUnder(targetReal, b))) {
        warn(`instructions: ${named}, outside the repository and your home: not read`);
      } else if (chain.length > MAX_IMPORT_DEPTH) {
        warn(`instructions: ${named}, more than ${MAX_IMPORT_DEPTH} imports deep: not read`);
      } else {
        visit(target, [...chain, targetReal], file);
      }
    }
  };
  for (const file of plan.candidates) visit(file, [realOrSame(file)]);
  return { files, text: joinCapped(parts), changes, warnings };
}

/** compose over an entry: imports are read once and remembered for the rechecks. */
function composeEntry(entry: Entry, env: Env): Instructions {
  const raw = entry.raw;
  const load = (file: string) => {
    if (!entry.looked.has(file)) {
      entry.looked.add(file);
      readInto(raw, file);
    }
    return raw.get(file);
  };
  return compose(entry.plan, load, (file, now) => viewOf(file, now, "instructions", env), env);
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
  for (const file of entry.looked) {
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

function keyOf(cwd: string, env: Env): string {
  return `${warrenConfigDir(env)}\0${homeOf(env)}\0${path.resolve(cwd)}`;
}

/** The instructions for an agent working in `cwd` (cached per process; see the header). */
export function instructionsFor(
  cwd: string,
  env: Env = process.env,
  recheckMs: number = RECHECK_MS,
): Instructions {
  const key = keyOf(cwd, env);
  let entry = cache.get(key);
  if (!entry) {
    const plan = planFor(cwd, env);
    entry = {
      plan,
      raw: readRaw(plan.candidates),
      looked: new Set(plan.candidates),
      checkedAt: Date.now(),
      checking: false,
    };
    cache.set(key, entry);
  } else if (!entry.checking && Date.now() - entry.checkedAt >= recheckMs) {
    const current = entry;
    current.checking = true;
    current.recheck = changed(current)
      .then((yes) => {
        // Read again from the candidates only: imports are found anew from the new text.
        if (yes) {
          current.looked = new Set(current.plan.candidates);
          current.raw = readRaw(current.looked);
        }
      })
      .catch(() => undefined)
      .finally(() => {
        current.checking = false;
        current.checkedAt = Date.now();
      });
  }
  // Composed again when the files or the store changed: an acceptance counts at the next request.
  const stamp = acceptedStamp(env);
  const last = entry.composed;
  if (last && last.raw === entry.raw && last.stamp === stamp) return last.value;
  const value = composeEntry(entry, env);
  entry.composed = { raw: entry.raw, stamp, value };
  return value;
}

/**
 * Every file an agent in `cwd` may read instructions from (start acceptance): the candidates,
 * existing or not, and the files their content imports as it is now.
 */
export function instructionCandidates(cwd: string, env: Env = process.env): string[] {
  const plan = planFor(cwd, env);
  const raw = new Map<string, RawFile>();
  const load = (file: string) => {
    if (!raw.has(file)) readInto(raw, file);
    return raw.get(file);
  };
  const asIs = compose(plan, load, (_file, now) => ({ use: now }), env);
  const imported = asIs.files.filter((f) => f.importedBy).map((f) => f.path);
  return [...plan.candidates, ...imported];
}

/**
 * Whether `file` is an imported instruction file of an agent in `cwd` (runtime/guarded-files.ts:
 * a write to it is asked like a write to AGENTS.md, whatever its name).
 */
export function isImportedInstruction(file: string, cwd: string, env: Env = process.env): boolean {
  const real = realOrSame(file);
  return instructionsFor(cwd, env).files.some(
    (f) => f.importedBy !== undefined && realOrSame(f.path) === real,
  );
}

/** One line naming the instruction files an agent in `cwd` reads (first screen, `warren doctor`). */
export function instructionFilesLine(cwd: string, env: Env = process.env): string {
  const { files, changes } = instructionsFor(cwd, env);
  const shown = (file: string) => shownPath(file, env);
  // Changed since the person accepted them: named, so that "read" never hides "not as it is".
  const waiting = changes.length
    ? `; changed, used as you accepted them until you accept the change: ${changes.map((c) => shown(c.file)).join(", ")}`
    : "";
  if (files.length === 0) return `instructions: no AGENTS.md or CLAUDE.md found${waiting}`;
  const named = files.map((f) => (f.importedBy ? `${shown(f.path)} (imported)` : shown(f.path)));
  return `instructions: ${named.join(", ")}${waiting}`;
}

/** The background check for `cwd` under way, if any (tests). */
export async function instructionsRechecked(cwd: string, env: Env = process.env): Promise<void> {
  await cache.get(keyOf(cwd, env))?.recheck;
}

/** Forgets what was read (tests). */
export function clearInstructionsCache(): void {
  cache.clear();
}
