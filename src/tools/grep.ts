// The grep tool: lines matching a JavaScript regular expression in one file or a directory tree,
// optionally only in files whose names match a glob. Binary and very large files are skipped.
import { stat } from "node:fs/promises";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { FILES_PER_TURN, hiddenRoot, MAX_VISITED, walkFiles, walkOptions } from "./glob.js";
import { hiddenSet } from "./hidden.js";
import { compileGlob, nextTurn, type GlobMatcher } from "./glob-match.js";
import { allowedPath, confinement, displayPath, guarded, type FileToolContext } from "./paths.js";
import { nonEmptyString, objectSchema, checkedTool } from "./args.js";
import { errorMessage, fail, ok } from "./tool.js";

const MAX_MATCHES = 500;
const MAX_LINE_CHARS = 500;
const MAX_FILE_BYTES = 5 * 1024 * 1024;

const parameters = objectSchema(
  {
    pattern: nonEmptyString("JavaScript regular expression, matched per line."),
    path: nonEmptyString("File or directory to search (default: your working directory)."),
    glob: nonEmptyString(
      'Only search files matching this glob, e.g. "*.ts" or "{*.ts,*.tsx}" (matched against the ' +
        'file name; a glob containing "/" is matched against the path under the searched directory).',
    ),
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

/** How long a search may run: a catastrophic pattern never stalls the worker's thread. */
export const grepLimits = { timeMs: 10_000 };

// The matching runs in a short-lived worker thread that is terminated at the deadline: a regular
// expression cannot be interrupted from its own thread (V8 runs it to completion).
const MATCHER = `
const { parentPort, workerData } = require("node:worker_threads");
const fs = require("node:fs");
const { pattern, flags, files, maxMatches, maxLine, maxBytes, inside, hiddenIds } = workerData;
const hidden = new Set(hiddenIds);
const path = require("node:path");
// Regular files only, opened without blocking (a FIFO swapped in is skipped, never waited on),
// and, when confined, only a descriptor whose real path is inside (a symlink swapped in between
// the walk and the open leads nowhere): see open-checked.ts.
function readChecked(file) {
  const { O_RDONLY, O_NONBLOCK, O_NOCTTY } = fs.constants;
  const fd = fs.openSync(file, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  try {
    const info = fs.fstatSync(fd);
    if (!info.isFile() || info.size > maxBytes) return undefined;
    // One of warren's secrets under another name (a hard link, a renamed parent): never read.
    if (hidden.has(info.dev + ":" + info.ino)) return undefined;
    if (inside !== undefined) {
      let real;
      try { real = fs.readlinkSync("/proc/self/fd/" + fd); } catch { real = undefined; }
      if (real !== undefined) {
        const rel = path.relative(inside, real);
        if (rel === ".." || rel.startsWith(".." + path.sep) || path.isAbsolute(rel)) return undefined;
      }
    }
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
const regex = new RegExp(pattern, flags);
const matches = [];
outer: for (const [file, shown] of files) {
  let bytes;
  try {
    bytes = readChecked(file);
  } catch { continue; }
  if (bytes === undefined) continue;
  if (bytes.subarray(0, 8192).includes(0)) continue; // binary (binary.ts)
  const lines = bytes.toString("utf8").split("\\n");
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    const text = raw.endsWith("\\r") ? raw.slice(0, -1) : raw;
    if (!regex.test(text)) continue;
    const clipped = text.length > maxLine ? text.slice(0, maxLine) + "\u2026" : text;
    matches.push({ file: shown, line: i + 1, text: clipped });
    if (matches.length > maxMatches) break outer;
  }
}
parentPort.postMessage(matches);
`;

type MatchOutcome = { matches: Match[] } | { timedOut: true } | { aborted: true };

/** Matches `files` ([absolute, shown]) in a worker; gives up at the deadline or on abort. */
function matchInWorker(
  files: [string, string][],
  pattern: string,
  flags: string,
  signal: AbortSignal,
  limitMs: number,
  /** The real directory the files must lie in (undefined: file access "any"). */
  inside: string | undefined,
  /** `dev:ino` of warren's secrets (hidden.ts): such a file is skipped, whatever its name. */
  hiddenIds: string[],
): Promise<MatchOutcome> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(MATCHER, {
      eval: true,
      workerData: {
        pattern,
        flags,
        files,
        maxMatches: MAX_MATCHES,
        maxLine: MAX_LINE_CHARS,
        maxBytes: MAX_FILE_BYTES,
        inside,
        hiddenIds,
      },
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    let settled = false;
    const finish = (outcome: MatchOutcome | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      void worker.terminate();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(() => finish({ timedOut: true }), limitMs);
    const onAbort = () => finish({ aborted: true });
    signal.addEventListener("abort", onAbort);
    worker.once("message", (matches: Match[]) => finish({ matches }));
    worker.once("error", (err) => finish(err));
    worker.once("exit", () => finish(new Error("the search stopped unexpectedly")));
  });
}

export const grepTool = checkedTool<GrepArgs, FileToolContext>({
  name: "grep",
  description:
    "Search file contents for a JavaScript regular expression; returns matching lines as " +
    `{file, line, text}, at most ${MAX_MATCHES}. Skips binary files, node_modules and .git.`,
  parameters,
  run: (args, ctx) =>
    guarded(ctx.cwd, async () => {
      const { pattern, glob, ignore_case: ignoreCase = false } = args;
      let regex: RegExp;
      try {
        regex = new RegExp(pattern, ignoreCase ? "i" : "");
      } catch (err) {
        return fail("INVALID_ARGS", `invalid regular expression: ${errorMessage(err)}`);
      }
      let filter: GlobMatcher | undefined;
      if (glob !== undefined) {
        const compiled = compileGlob(glob);
        if (!compiled.ok) return compiled;
        filter = compiled.value;
      }
      const allowed = await allowedPath(ctx, args.path ?? ".");
      if (!allowed.ok) return allowed;
      const root = allowed.value;
      const secret = await hiddenRoot(ctx, args.path ?? ".", root);
      if (secret) return secret;
      const files: [string, string][] = [];
      let incomplete = false;
      if ((await stat(root)).isFile()) {
        files.push([root, displayPath(ctx.cwd, root)]);
      } else {
        const byName = glob !== undefined && !glob.includes("/");
        const walk = await walkOptions(ctx);
        let visited = 0;
        for await (const rel of walkFiles(root, walk)) {
          if (++visited > MAX_VISITED) {
            incomplete = true;
            break;
          }
          if (visited % FILES_PER_TURN === 0) await nextTurn();
          if (filter && !filter.test(byName ? path.posix.basename(rel) : rel)) continue;
          const file = path.join(root, rel);
          files.push([file, displayPath(ctx.cwd, file)]);
        }
      }
      const found = await matchInWorker(
        files,
        regex.source,
        regex.flags,
        ctx.signal,
        grepLimits.timeMs,
        await confinement(ctx),
        [...hiddenSet(process.env, ctx.shell?.configPath).ids],
      );
      if ("timedOut" in found) {
        return fail(
          "LIMIT_EXCEEDED",
          `the search took longer than ${grepLimits.timeMs / 1000} s and was stopped; ` +
            "simplify the pattern (nested quantifiers such as (a+)+ can take forever) or narrow the path",
        );
      }
      const matches = "matches" in found ? found.matches : [];
      const truncated = incomplete || matches.length > MAX_MATCHES || ctx.signal.aborted;
      return ok({ matches: matches.slice(0, MAX_MATCHES), ...(truncated && { truncated: true }) });
    }),
});
