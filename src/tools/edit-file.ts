// The edit_file tool: replaces one exact, unique occurrence of a string in a text file.
import { readFile, writeFile } from "node:fs/promises";
import {
  allowedPath,
  checkArgs,
  displayPath,
  guarded,
  isBinary,
  objectSchema,
  type FileToolContext,
} from "./paths.js";
import { fail, ok, type Tool } from "./tool.js";

const parameters = objectSchema(
  {
    path: {
      type: "string",
      minLength: 1,
      description: "File path, relative to your working directory or absolute.",
    },
    old_string: {
      type: "string",
      minLength: 1,
      description: "Exact text to replace, whitespace included; it must occur exactly once.",
    },
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

export const editFileTool: Tool<FileToolContext> = {
  name: "edit_file",
  outside: true,
  description:
    "Replace old_string with new_string in a file. old_string must match the file's text " +
    "exactly (whitespace and indentation included) and occur exactly once; add surrounding " +
    "lines to make it unique.",
  parameters,
  run: (args, ctx) =>
    guarded(ctx.cwd, async () => {
      const checked = checkArgs<EditArgs>(parameters, args);
      if (!checked.ok) return checked;
      const { old_string: oldString, new_string: newString } = checked.value;
      const allowed = await allowedPath(ctx, checked.value.path);
      if (!allowed.ok) return allowed;
      const absolute = allowed.value;
      const shown = displayPath(ctx.cwd, absolute);
      if (oldString === newString) {
        return fail("INVALID_ARGS", "old_string and new_string are identical; nothing to change");
      }
      const bytes = await readFile(absolute);
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
      await writeFile(absolute, text.slice(0, at) + newString + text.slice(at + oldString.length));
      return ok({ path: shown, replacements: 1 });
    }),
};
