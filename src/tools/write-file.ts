// The write_file tool: writes a whole text file, creating missing parent directories.
import { openChecked, rewrite } from "./open-checked.js";
import { guarded, type FileToolContext } from "./paths.js";
import { FILE_PATH, objectSchema, checkedTool } from "./args.js";
import { ok } from "./tool.js";

const parameters = objectSchema(
  {
    path: FILE_PATH,
    content: { type: "string", description: "The complete new content of the file." },
  },
  ["path", "content"],
);

interface WriteArgs {
  path: string;
  content: string;
}

export const writeFileTool = checkedTool<WriteArgs, FileToolContext>({
  name: "write_file",
  outside: true,
  description:
    "Create or overwrite a text file with the given content, creating parent directories as " +
    "needed. To change part of an existing file, prefer edit_file.",
  parameters,
  run: (args, ctx) =>
    guarded(ctx.cwd, async () => {
      // A regular file only, and the one checked (open-checked.ts): created with O_EXCL, or
      // opened without following a symlink swapped in, never a FIFO that would block.
      const opened = await openChecked(ctx, args.path, "write");
      if (!opened.ok) return opened;
      const { handle, shown } = opened.value;
      const bytes = await rewrite(handle, args.content).finally(() => handle.close());
      return ok({ path: shown, bytes });
    }),
});
