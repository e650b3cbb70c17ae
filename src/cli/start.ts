// `warren` with no subcommand: opens a tree (the most recent, a new one with --new, or --tree ID)
// in the TUI, with this process's worker threads running the tree's agents. Without a terminal
// it prints the tree as `warren ls` does and says the TUI needs one.
import { createTree } from "../agents/tree.js";
import { createBus } from "../bus/bus.js";
import { closeDb } from "../db/client.js";
import { loadConfig } from "../config/config.js";
import { startRuntime } from "../runtime/pool.js";
import { startTui } from "../ui/app.js";
import type { Io } from "./command.js";
import { printTree } from "./ls.js";
import { treeOrLatest, withDatabase } from "./scope.js";

export interface StartOptions {
  newTree: boolean;
  tree: string | undefined;
}

export async function runStart(options: StartOptions, io: Io): Promise<number> {
  // Validated now so a broken config file is reported before anything else.
  const config = loadConfig(io.env);
  const tty = process.stdout.isTTY === true && process.stdin.isTTY === true;
  await withDatabase(io.env, async (db, url) => {
    let root = options.newTree ? undefined : await treeOrLatest(db, options.tree);
    root ??= await createTree(db, {
      cwd: process.cwd(),
      model: config.model.name ?? null,
      budget: config.rootBudget,
    });
    if (!tty) {
      await printTree(db, io, root.id, { json: false, all: false });
      io.out(
        io.color.dim("the TUI needs a terminal; use warren ls, log, send, kill, export or -p"),
      );
      return;
    }
    // Warnings before the TUI is up are kept and shown once it is.
    const early: string[] = [];
    let hungUp = false;
    let warn: (message: string) => void = (message) => {
      early.push(message);
    };
    const bus = await createBus(url, { onWarning: (message) => warn(message) });
    const runtime = await startRuntime({
      url,
      config,
      treeId: root.id,
      onWarning: (message) => warn(message),
    });
    try {
      const tui = await startTui({
        db,
        bus,
        config,
        root,
        env: io.env,
        stdin: process.stdin,
        stdout: process.stdout,
      });
      warn = tui.warn;
      early.forEach(tui.warn);
      const onTerm = () => void tui.close();
      const onHangup = () => {
        hungUp = true;
        void tui.close();
      };
      process.once("SIGTERM", onTerm);
      process.once("SIGHUP", onHangup);
      await tui.done;
      process.off("SIGTERM", onTerm);
      process.off("SIGHUP", onHangup);
    } finally {
      await runtime.stop();
      await bus.close();
    }
    if (hungUp) {
      // The terminal is gone: Node's exit would try to restore its modes and abort on the dead
      // descriptor (a native assertion). Everything is stopped and saved by now, so leave hard.
      await closeDb(db);
      process.kill(process.pid, "SIGKILL");
    }
  });
  return 0;
}
