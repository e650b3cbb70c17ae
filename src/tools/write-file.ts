// The write_file tool: writes a whole text file, creating missing parent directories.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  allowedPath,
  checkArgs,
  displayPath,
  guarded,
  objectSchema,
  type FileToolContext,
} from "./paths.js";
import { ok, type Tool } from "./tool.js";

const parameters = objectSchema(
  {
    path: {
      type: "string",
      minLength: 1,
      description: "File path, relative to your working directory or absolute.",
    },
    content: { type: "string", description: "The complete new content of the file." },
  },
  ["path", "content"],
);

interface WriteArgs {
  path: string;
  content: string;
}

export const writeFileTool: Tool<FileToolContext> = {
  name: "write_file",
  outside: true,
  description:
    "Create or overwrite a text file with the given content, creating parent directories as " +
    "needed. To change part of an existing file, prefer edit_file.",
  parameters,
  run: (args, ctx) =>
    guarded(ctx.cwd, async () => {
      const checked = checkArgs<WriteArgs>(parameters, args);
      if (!checked.ok) return checked;
      const allowed = await allowedPath(ctx, checked.value.path);
      if (!allowed.ok) return allowed;
      const absolute = allowed.value;
      await mkdir(path.dirname(absolute), { recursive: true });
      await writeFile(absolute, checked.value.content, "utf8");
      return ok({
        path: displayPath(ctx.cwd, absolute),
        bytes: Buffer.byteLength(checked.value.content, "utf8"),
      });
    }),
};
