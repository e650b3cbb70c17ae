// The edit_file tool: replaces one exact, unique occurrence of a string in a text file.
import type { FileHandle } from "node:fs/promises";
import { openChecked, readAtMost, rewrite } from "./open-checked.js";
import { isBinary } from "./binary.js";
import { guarded, type FileToolContext } from "./paths.js";
import { FILE_PATH, nonEmptyString, objectSchema, checkedTool } from "./args.js";
import { fail, ok, type ToolOutcome } from "./tool.js";

const MAX_FILE_BYTES = 50 * 1024 * 1024;

const parameters = objectSchema(
  {
    path: FILE_PATH,
    old_string: nonEmptyString(
      "Exact text to replace, whitespace included; it must occur exactly once.",
    ),
    new_string: { type: "string", description: "The replacement text." },
  },
  ["path", "old_string", "new_string"],
);

interface EditArgs {
  path: string;
  old_string: string;
  new_string: string;
}

/** Start offsets of `needle` in `text`, overlapping ones included (they are ambiguous too). */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) {
    found.push(at);
  }
  return found;
}

export const editFileTool = checkedTool<EditArgs, FileToolContext>({
  name: "edit_file",
  outside: true,
  description:
    "Replace old_string with new_string in a file. old_string must match the file's text " +
    "exactly (whitespace and indentation included) and occur exactly once; add surrounding " +
    "lines to make it unique.",
  parameters,
  run: (args, ctx) =>
    guarded(ctx.cwd, async () => {
      const { old_string: oldString, new_string: newString } = args;
      if (oldString === newString) {
        return fail("INVALID_ARGS", "old_string and new_string are identical; nothing to change");
      }
      // A regular file only, and the one checked (open-checked.ts); read and written through
      // the same descriptor, so what is written is the file that was read.
      const opened = await openChecked(ctx, args.path, "update");
      if (!opened.ok) return opened;
      const { handle, shown } = opened.value;
      try {
        return await editOpen(handle, shown, oldString, newString);
      } finally {
        await handle.close();
      }
    }),
});

async function editOpen(
  handle: FileHandle,
  shown: string,
  oldString: string,
  newString: string,
): Promise<ToolOutcome> {
  const bytes = await readAtMost(handle, MAX_FILE_BYTES);
  if (bytes === undefined) return fail("INVALID_ARGS", `${shown} is too large to edit`);
  if (isBinary(bytes)) return fail("INVALID_ARGS", `${shown} is a binary file`);
  const text = bytes.toString("utf8");
  const found = occurrences(text, oldString);
  const at = found[0];
  if (at === undefined) {
    return fail(
      "INVALID_ARGS",
      `old_string not found in ${shown}; read the file to copy it exactly`,
    );
  }
  if (found.length > 1) {
    return fail(
      "INVALID_ARGS",
      `old_string matches ${found.length} times in ${shown}; add context to make it unique`,
    );
  }
  // Sliced, not String.replace: "$&" and friends in new_string must stay literal.
  await rewrite(handle, text.slice(0, at) + newString + text.slice(at + oldString.length));
  return ok({ path: shown, replacements: 1 });
}
