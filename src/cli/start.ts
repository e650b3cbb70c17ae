// `warren` with no subcommand: opens a tree (the most recent, a new one with --new, or --tree ID)
// in the TUI, with this process's worker threads running the tree's agents. Without a terminal
// it prints the tree as `warren ls` does and says the TUI needs one.
import { createTree } from "../agents/tree.js";
import { agents } from "../agents/agents.sql.js";
import type { ApproveMode } from "../config/policy.js";
import { eq } from "drizzle-orm";
import type { AgentRow } from "../agents/agents.sql.js";
import { createBus } from "../bus/bus.js";
import { listenUrlFor, loadConfig, type Config } from "../config/config.js";
import { closeDb, type Db } from "../db/client.js";
import { describeFailure } from "../ui/failure.js";
import { startRuntime } from "../runtime/pool.js";
import { startTui } from "../ui/app.js";
import type { Io } from "./command.js";
import { printTree } from "./ls.js";
import { treeOrLatest, withDatabase } from "./scope.js";

export interface StartOptions {
  newTree: boolean;
  tree: string | undefined;
  /** `--approve`: a new tree records it; an opened tree is switched to it. */
  approve?: ApproveMode;
}

export async function runStart(options: StartOptions, io: Io): Promise<number> {
  // Validated now so a broken config file is reported before anything else.
  const config = loadConfig(io.env);
  const tty = process.stdout.isTTY === true && process.stdin.isTTY === true;
  // Keys typed while the database opens are kept for the TUI (and not echoed or cooked).
  const held = tty ? holdKeys(process.stdin) : undefined;
  try {
    await withDatabase(io.env, async (db, url) => {
      let root = options.newTree ? undefined : await treeOrLatest(db, options.tree);
      if (root && options.approve) {
        await db.update(agents).set({ approve: options.approve }).where(eq(agents.id, root.id));
      }
      root ??= await createTree(db, {
        cwd: process.cwd(),
        model: config.model.name ?? null,
        budget: config.rootBudget,
        approve: options.approve ?? config.approve ?? "ask",
      });
      if (!held) {
        await printTree(db, io, root.id, {
          json: false,
          all: false,
          pricing: { prices: config.prices, model: config.model.name },
        });
        io.out(
          io.color.dim("the TUI needs a terminal; use warren ls, log, send, kill, export or -p"),
        );
        return;
      }
      await runTuiSession({ db, url, config, root, io, typedAhead: held.release() });
    });
  } finally {
    held?.restore();
  }
  return 0;
}

interface Session {
  db: Db;
  url: string;
  config: Config;
  root: AgentRow;
  io: Io;
  typedAhead: string;
}

/** The TUI on `root`, with this process's worker threads running the tree's agents meanwhile. */
async function runTuiSession(session: Session): Promise<void> {
  const { db, url, config, root, io } = session;
  // Warnings before the TUI is up are kept and shown once it is.
  const early: string[] = [];
  let hungUp = false;
  let warn: (message: string) => void = (message) => {
    early.push(message);
  };
  const bus = await createBus(listenUrlFor(config, url), { onWarning: (message) => warn(message) });
  // Worker threads take seconds to load: the TUI draws and takes input meanwhile.
  const runtime = startRuntime({
    url,
    config,
    treeId: root.id,
    yieldToMain: true,
    onWarning: (message) => warn(message),
  });
  runtime.catch((error: unknown) =>
    warn(`agents cannot run in this process: ${describeFailure(error)}`),
  );
  try {
    const tui = await startTui({
      db,
      bus,
      config,
      root,
      env: io.env,
      stdin: process.stdin,
      stdout: process.stdout,
      typedAhead: session.typedAhead,
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
    await runtime.then((r) => r.stop()).catch(() => undefined);
    await bus.close();
  }
  if (hungUp) {
    // The terminal is gone: Node's exit would try to restore its modes and abort on the dead
    // descriptor (a native assertion). Everything is stopped and saved by now, so leave hard.
    await closeDb(db);
    process.kill(process.pid, "SIGKILL");
  }
}

/**
 * Puts the terminal in raw mode at once and keeps what is typed until the TUI takes it; Ctrl+C
 * meanwhile leaves (raw mode turns it into a byte, not a signal).
 */
function holdKeys(stdin: NodeJS.ReadStream) {
  const chunks: string[] = [];
  const onData = (chunk: string) => {
    if (chunk.includes("\x03")) {
      stdin.setRawMode(false);
      process.exit(130);
    }
    chunks.push(chunk);
  };
  stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.on("data", onData);
  stdin.resume();
  return {
    /**
     * Stops holding; returns what was typed. Keys typed before raw mode arrive as cooked lines
     * (Enter became "\n"): an Enter typed ahead is an Enter, so "\n" is taken as "\r".
     */
    release(): string {
      stdin.off("data", onData);
      stdin.pause();
      return chunks.splice(0).join("").replace(/\n/g, "\r");
    },
    /** Back to the terminal's normal mode (after the TUI, or when it never started). */
    restore(): void {
      stdin.off("data", onData);
      if (stdin.isTTY) stdin.setRawMode(false);
      stdin.pause();
    },
  };
}
