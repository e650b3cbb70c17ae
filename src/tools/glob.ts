// The glob tool, plus the directory walk that grep shares: `**`, `*`, `?`, `[abc]` and `{a,b}`
// patterns (glob-match.ts) over a walk that skips node_modules and .git and stays inside cwd,
// and never enters warren's hidden set (hidden.ts) whatever the working directory.
import { statSync, type Dirent } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { compileGlob, nextTurn } from "./glob-match.js";
import { hiddenMessage, hiddenSet, isHidden, type HiddenSet } from "./hidden.js";
import {
  allowedPath,
  confinement,
  displayPath,
  guarded,
  isInside,
  type FileToolContext,
} from "./paths.js";
import { nonEmptyString, objectSchema, checkedTool } from "./args.js";
import { fail, ok, type ToolOutcome } from "./tool.js";

const MAX_FILES = 1000;
/** Files looked at before giving up, so a walk of a huge tree stays bounded (grep's too). */
export const MAX_VISITED = 200_000;
/** Files matched between yields to the event loop, so other agents' turns on the thread run. */
export const FILES_PER_TURN = 256;
const SKIPPED_DIRS = new Set(["node_modules", ".git"]);
const MAGIC = /[*?[{\\]/;

export interface WalkOptions {
  signal: AbortSignal;
  /** A real directory that symlinked files must resolve inside; undefined: anywhere. */
  inside?: string;
  /** Warren's secrets: not listed, not entered (by path, and a folder by identity too). */
  hidden?: HiddenSet;
}

/** Whether the walk must leave `absolute` out: in the hidden set by path (a folder: by identity). */
function leftOut(options: WalkOptions, absolute: string, dir: boolean): boolean {
  const hidden = options.hidden;
  if (!hidden) return false;
  if (hidden.paths.some((h) => isInside(h, absolute))) return true;
  if (!dir) return false;
  try {
    const st = statSync(absolute);
    return hidden.ids.has(`${st.dev}:${st.ino}`);
  } catch {
    return false;
  }
}

/** The walk's options for a file tool: confinement and the hidden set. */
export async function walkOptions(ctx: FileToolContext): Promise<WalkOptions> {
  return {
    signal: ctx.signal,
    inside: await confinement(ctx),
    hidden: hiddenSet(process.env, ctx.shell?.configPath),
  };
}

/** NOT_ALLOWED when a search root is (in) the hidden set, else undefined. */
export async function hiddenRoot(
  ctx: FileToolContext,
  given: string,
  absolute: string,
): Promise<ToolOutcome | undefined> {
  const set = hiddenSet(process.env, ctx.shell?.configPath);
  const real = await realpath(absolute).catch(() => absolute);
  return isHidden(set, absolute, real) ? fail("NOT_ALLOWED", hiddenMessage(given)) : undefined;
}

/**
 * Yields the files under `root` as "/"-separated paths relative to it, in sorted order.
 * Skips node_modules and .git, follows symlinks to files (inside `options.inside`) but not to
 * directories (no cycles, no escape), and ignores directories it cannot read. Stops early once
 * `options.signal` is aborted.
 */
export async function* walkFiles(
  root: string,
  options: WalkOptions,
  prefix = "",
): AsyncGenerator<string> {
  let entries: Dirent[];
  try {
    entries = await readdir(path.join(root, prefix), { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (options.signal.aborted) return;
    const rel = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (leftOut(options, path.join(root, rel), entry.isDirectory())) continue;
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) yield* walkFiles(root, options, rel);
    } else if (entry.isFile()) {
      yield rel;
    } else if (entry.isSymbolicLink() && (await isFileWithin(path.join(root, rel), options))) {
      yield rel;
    }
  }
}

async function isFileWithin(link: string, options: WalkOptions): Promise<boolean> {
  const target = await realpath(link).catch(() => undefined);
  if (target === undefined) return false;
  if (options.inside !== undefined && !isInside(options.inside, target)) return false;
  if (options.hidden && isHidden(options.hidden, link, target)) return false;
  return (await stat(target).catch(() => undefined))?.isFile() ?? false;
}

/** Splits a pattern's leading literal directories ("src/tools/*.ts" → "src/tools", "*.ts"). */
function splitStaticPrefix(pattern: string): { base: string; rest: string } {
  const segments = pattern.split("/");
  let literal = 0;
  while (literal < segments.length - 1 && !MAGIC.test(segments[literal] ?? "")) literal++;
  const base = segments.slice(0, literal).join("/");
  return { base: base === "" && literal > 0 ? "/" : base, rest: segments.slice(literal).join("/") };
}

const parameters = objectSchema(
  {
    pattern: nonEmptyString(
      'Glob such as "**/*.ts" or "src/{a,b}/*.json"; "*" stays within one directory.',
    ),
    path: nonEmptyString("Directory to search in (default: your working directory)."),
  },
  ["pattern"],
);

interface GlobArgs {
  pattern: string;
  path?: string;
}

export const globTool = checkedTool<GlobArgs, FileToolContext>({
  name: "glob",
  description:
    'List files whose paths match a glob pattern (use "**/" to search subdirectories), sorted, ' +
    `at most ${MAX_FILES}. node_modules and .git are skipped.`,
  parameters,
  run: (args, ctx) =>
    guarded(ctx.cwd, async () => {
      const { base, rest } = splitStaticPrefix(args.pattern);
      const matcher = compileGlob(rest);
      if (!matcher.ok) return matcher;
      const searchRoot = await allowedPath(ctx, args.path ?? ".");
      if (!searchRoot.ok) return searchRoot;
      const secret = await hiddenRoot(ctx, args.path ?? ".", searchRoot.value);
      if (secret) return secret;
      if (!(await stat(searchRoot.value)).isDirectory()) {
        return fail("INVALID_ARGS", `${displayPath(ctx.cwd, searchRoot.value)} is not a directory`);
      }
      // The pattern's literal directories ("../", "/etc/") are a path like any other.
      const root = await allowedPath(ctx, path.resolve(searchRoot.value, base));
      if (!root.ok) return root;
      const hiddenBase = await hiddenRoot(ctx, args.pattern, root.value);
      if (hiddenBase) return hiddenBase;
      const walk = await walkOptions(ctx);
      const files: string[] = [];
      let visited = 0;
      let incomplete = false;
      for await (const rel of walkFiles(root.value, walk)) {
        if (++visited > MAX_VISITED) {
          incomplete = true;
          break;
        }
        if (visited % FILES_PER_TURN === 0) await nextTurn();
        if (matcher.value.test(rel)) files.push(displayPath(ctx.cwd, path.join(root.value, rel)));
      }
      files.sort();
      const truncated = incomplete || ctx.signal.aborted || files.length > MAX_FILES;
      return ok({ files: files.slice(0, MAX_FILES), ...(truncated && { truncated: true }) });
    }),
});
