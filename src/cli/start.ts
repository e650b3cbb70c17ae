// `warren` with no subcommand: opens a tree (the most recent, a new one with --new, or --tree ID).
// The interactive TUI is not built yet, so for now it prints the tree as `warren ls` does.
import { createTree } from "../agents/tree.js";
import { loadConfig } from "../config/config.js";
import type { Io } from "./command.js";
import { printTree } from "./ls.js";
import { treeOrLatest, withDatabase } from "./scope.js";

export interface StartOptions {
  newTree: boolean;
  tree: string | undefined;
}

export async function runStart(options: StartOptions, io: Io): Promise<number> {
  // Validated now so a broken config file is reported before anything else.
  loadConfig(io.env);
  await withDatabase(io.env, async (db) => {
    let root = options.newTree ? undefined : await treeOrLatest(db, options.tree);
    root ??= await createTree(db, { cwd: process.cwd() });
    await printTree(db, io, root.id, { json: false, all: false });
  });
  io.out(
    io.color.dim(
      "the interactive TUI is not available yet; use warren ls, log, send, kill, export or -p meanwhile",
    ),
  );
  return 0;
}
