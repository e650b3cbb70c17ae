// The grep tool: lines matching a JavaScript regular expression in one file or a directory tree,
// optionally only in files whose names match a glob. Binary and very large files are skipped.
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { globToRegExp, walkFiles } from "./glob.js";
import { checkArgs, displayPath, guarded, isBinary, objectSchema, resolvePath } from "./paths.js";
import { errorMessage, fail, ok, type Tool } from "./tool.js";

const MAX_MATCHES = 500;
const MAX_LINE_CHARS = 500;
const MAX_FILE_BYTES = 5 * 1024 * 1024;

const parameters = objectSchema(
  {
    pattern: {
      type: "string",
      minLength: 1,
      description: "JavaScript regular expression, matched per line.",
    },
    path: {
      type: "string",
      minLength: 1,
      description: "File or directory to search (default: your working directory).",
    },
    glob: {
      type: "string",
      minLength: 1,
      description:
        'Only search files matching this glob, e.g. "*.ts" or "{*.ts,*.tsx}" (matched against the ' +
        'file name; a glob containing "/" is matched against the path under the searched directory).',
    },
    ignore_case: { type: "boolean", description: "Match case-insensitively (default false)." },
  },
  ["pattern"],
);

interface GrepArgs {
  pattern: string;
  path?: string;
  glob?: string;
  ignore_case?: boolean;
}

interface Match {
  file: string;
  line: number;
  text: string;
}

/** Appends the matching lines of one file to `matches`, stopping at one past the cap. */
async function searchFile(file: string, shown: string, regex: RegExp, matches: Match[]) {
  const info = await stat(file).catch(() => undefined);
  if (info === undefined || info.size > MAX_FILE_BYTES) return;
  const bytes = await readFile(file).catch(() => undefined);
  if (bytes === undefined || isBinary(bytes)) return;
  const lines = bytes.toString("utf8").split("\n");
  for (const [index, raw] of lines.entries()) {
    const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (!regex.test(text)) continue;
    const clipped = text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}…` : text;
    matches.push({ file: shown, line: index + 1, text: clipped });
    if (matches.length > MAX_MATCHES) return;
  }
}

export const grepTool: Tool = {
  name: "grep",
  description:
    "Search file contents for a JavaScript regular expression; returns matching lines as " +
    `{file, line, text}, at most ${MAX_MATCHES}. Skips binary files, node_modules and .git.`,
  parameters,
  run: (args, ctx) =>
    guarded(ctx.cwd, async () => {
      const checked = checkArgs<GrepArgs>(parameters, args);
      if (!checked.ok) return checked;
      const { pattern, glob, ignore_case: ignoreCase = false } = checked.value;
      let regex: RegExp;
      try {
        regex = new RegExp(pattern, ignoreCase ? "i" : "");
      } catch (err) {
        return fail("INVALID_ARGS", `invalid regular expression: ${errorMessage(err)}`);
      }
      const root = resolvePath(ctx.cwd, checked.value.path ?? ".");
      const matches: Match[] = [];
      if ((await stat(root)).isFile()) {
        await searchFile(root, displayPath(ctx.cwd, root), regex, matches);
      } else {
        const filter = glob === undefined ? undefined : globToRegExp(glob);
        const byName = glob !== undefined && !glob.includes("/");
        for await (const rel of walkFiles(root, ctx.signal)) {
          if (filter && !filter.test(byName ? path.posix.basename(rel) : rel)) continue;
          const file = path.join(root, rel);
          await searchFile(file, displayPath(ctx.cwd, file), regex, matches);
          if (matches.length > MAX_MATCHES) break;
        }
      }
      const truncated = matches.length > MAX_MATCHES || ctx.signal.aborted;
      return ok({ matches: matches.slice(0, MAX_MATCHES), ...(truncated && { truncated: true }) });
    }),
};
