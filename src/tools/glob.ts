// The glob tool, plus the glob matcher and directory walk that grep shares: `**`, `*`, `?`,
// `[abc]` and `{a,b}` patterns over a walk that skips node_modules and .git.
import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { checkArgs, displayPath, guarded, objectSchema, resolvePath } from "./paths.js";
import { fail, ok, type Tool } from "./tool.js";

const MAX_FILES = 1000;
/** Files looked at before giving up, so a walk of a huge tree stays bounded. */
const MAX_VISITED = 200_000;
const SKIPPED_DIRS = new Set(["node_modules", ".git"]);
const MAGIC = /[*?[{\\]/;

/** A glob as an anchored RegExp over "/"-separated relative paths. `*` matches dotfiles too. */
export function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${translate(glob)}$`);
}

function translate(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] ?? "";
    if (c === "*") {
      let last = i;
      while (glob[last + 1] === "*") last++;
      const wholeSegment = last > i && (i === 0 || glob[i - 1] === "/");
      if (wholeSegment && glob[last + 1] === "/") {
        out += "(?:[^/]*/)*"; // "**/": any number of directories, none included
        i = last + 1;
      } else if (wholeSegment && last + 1 === glob.length) {
        out += ".*";
        i = last;
      } else {
        out += "[^/]*";
        i = last;
      }
    } else if (c === "?") {
      out += "[^/]";
    } else if (c === "[") {
      const close = glob.indexOf("]", i + 2);
      if (close === -1) {
        out += "\\[";
      } else {
        const body = glob.slice(i + 1, close).replace(/\\/g, "\\\\");
        out += `[${body.startsWith("!") ? `^${body.slice(1)}` : body}]`;
        i = close;
      }
    } else if (c === "{") {
      const close = matchingBrace(glob, i);
      if (close === -1) {
        out += "\\{";
      } else {
        out += `(?:${splitAlternatives(glob.slice(i + 1, close))
          .map(translate)
          .join("|")})`;
        i = close;
      }
    } else if (c === "\\" && i + 1 < glob.length) {
      out += escapeRegExp(glob[++i] ?? "");
    } else {
      out += escapeRegExp(c);
    }
  }
  return out;
}

function matchingBrace(glob: string, open: number): number {
  let depth = 0;
  for (let i = open; i < glob.length; i++) {
    if (glob[i] === "\\") i++;
    else if (glob[i] === "{") depth++;
    else if (glob[i] === "}" && --depth === 0) return i;
  }
  return -1;
}

/** Splits "a,{b,c},d" at its top-level commas. */
function splitAlternatives(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === "\\") i++;
    else if (c === "{") depth++;
    else if (c === "}") depth--;
    else if (c === "," && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * Yields the files under `root` as "/"-separated paths relative to it, in sorted order.
 * Skips node_modules and .git, follows symlinks to files but not to directories (no cycles),
 * and ignores directories it cannot read. Stops early once `signal` is aborted.
 */
export async function* walkFiles(
  root: string,
  signal: AbortSignal,
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
    if (signal.aborted) return;
    const rel = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) yield* walkFiles(root, signal, rel);
    } else if (entry.isFile()) {
      yield rel;
    } else if (entry.isSymbolicLink()) {
      const target = await stat(path.join(root, rel)).catch(() => undefined);
      if (target?.isFile()) yield rel;
    }
  }
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
    pattern: {
      type: "string",
      minLength: 1,
      description: 'Glob such as "**/*.ts" or "src/{a,b}/*.json"; "*" stays within one directory.',
    },
    path: {
      type: "string",
      minLength: 1,
      description: "Directory to search in (default: your working directory).",
    },
  },
  ["pattern"],
);

interface GlobArgs {
  pattern: string;
  path?: string;
}

export const globTool: Tool = {
  name: "glob",
  description:
    'List files whose paths match a glob pattern (use "**/" to search subdirectories), sorted, ' +
    `at most ${MAX_FILES}. node_modules and .git are skipped.`,
  parameters,
  run: (args, ctx) =>
    guarded(ctx.cwd, async () => {
      const checked = checkArgs<GlobArgs>(parameters, args);
      if (!checked.ok) return checked;
      const searchRoot = resolvePath(ctx.cwd, checked.value.path ?? ".");
      if (!(await stat(searchRoot)).isDirectory()) {
        return fail("INVALID_ARGS", `${displayPath(ctx.cwd, searchRoot)} is not a directory`);
      }
      const { base, rest } = splitStaticPrefix(checked.value.pattern);
      const root = path.resolve(searchRoot, base);
      const matcher = globToRegExp(rest);
      const files: string[] = [];
      let visited = 0;
      let incomplete = false;
      for await (const rel of walkFiles(root, ctx.signal)) {
        if (++visited > MAX_VISITED) {
          incomplete = true;
          break;
        }
        if (matcher.test(rel)) files.push(displayPath(ctx.cwd, path.join(root, rel)));
      }
      files.sort();
      const truncated = incomplete || ctx.signal.aborted || files.length > MAX_FILES;
      return ok({ files: files.slice(0, MAX_FILES), ...(truncated && { truncated: true }) });
    }),
};
