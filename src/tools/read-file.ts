// The read_file tool: a text file's lines, from an optional 1-based offset, capped in lines and
// characters, with where to continue when cut.
import { openChecked, readAtMost } from "./open-checked.js";
import { isBinary } from "./binary.js";
import { guarded, type FileToolContext } from "./paths.js";
import { FILE_PATH, objectSchema, checkedTool } from "./args.js";
import { fail, ok } from "./tool.js";

const MAX_LINES = 2000;
const MAX_CHARS = 100_000;
const MAX_FILE_BYTES = 50 * 1024 * 1024;

const parameters = objectSchema(
  {
    path: FILE_PATH,
    offset: {
      type: "integer",
      minimum: 1,
      description: "First line to return, 1-based (default 1).",
    },
    limit: {
      type: "integer",
      minimum: 1,
      description: `Most lines to return (default and max ${MAX_LINES}).`,
    },
  },
  ["path"],
);

interface ReadArgs {
  path: string;
  offset?: number;
  limit?: number;
}

/** Lines with their terminators kept, so the returned content is the file's exact text. */
function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

export const readFileTool = checkedTool<ReadArgs, FileToolContext>({
  name: "read_file",
  description:
    `Read a text file. Returns its content (at most ${MAX_LINES} lines or ${MAX_CHARS} characters ` +
    "at a time) and total_lines; when truncated, call again with offset = next_offset.",
  parameters,
  run: (args, ctx) =>
    guarded(ctx.cwd, async () => {
      const { offset = 1, limit = MAX_LINES } = args;
      // A regular file only, and the one checked (open-checked.ts): never a FIFO or a swap.
      const opened = await openChecked(ctx, args.path, "read");
      if (!opened.ok) return opened;
      const { handle, shown } = opened.value;
      const bytes = await readAtMost(handle, MAX_FILE_BYTES).finally(() => handle.close());
      if (bytes === undefined) {
        return fail(
          "INVALID_ARGS",
          `${shown} is too large (over ${MAX_FILE_BYTES} bytes); use bash (head, tail, sed -n) to read parts`,
        );
      }
      if (isBinary(bytes)) return fail("INVALID_ARGS", `${shown} is a binary file`);

      const lines = splitLines(bytes.toString("utf8"));
      if (offset > Math.max(lines.length, 1)) {
        return fail(
          "INVALID_ARGS",
          `offset ${offset} is past the end of ${shown} (${lines.length} lines)`,
        );
      }
      const end = Math.min(lines.length, offset - 1 + Math.min(limit, MAX_LINES));
      let content = "";
      let next = offset - 1; // index of the first line not returned
      let cutLine = false;
      while (next < end) {
        const line = lines[next] ?? "";
        if (content.length + line.length > MAX_CHARS) {
          // A single line longer than the cap is returned cut rather than not at all.
          if (content === "") {
            content = line.slice(0, MAX_CHARS);
            cutLine = true;
            next++;
          }
          break;
        }
        content += line;
        next++;
      }
      const more = next < lines.length;
      return ok({
        path: shown,
        content,
        total_lines: lines.length,
        ...((cutLine || more) && { truncated: true }),
        ...(more && { next_offset: next + 1 }),
      });
    }),
});
