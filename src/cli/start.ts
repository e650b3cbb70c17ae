// `warren` with no subcommand: opens a tree (the most recent, a new one with --new, or --tree ID)
// in the TUI, with this process's worker threads running the tree's agents. Without a terminal
// it prints the tree as `warren ls` does and says the TUI needs one.
//
// The first frame comes first: the TUI's code loads while the database opens, the listener
// connects while the tree is read and the first frame is drawn (the feed waits for it, not the
// frame), and the worker threads (seconds of loading on other cores) start once the TUI is up,
// their module loaded only then. `npm run bench -- --only startup` times it.
import { acceptFilesAtStart } from "../runtime/file-changes.js";
import { eq } from "drizzle-orm";
import { agents, type AgentRow } from "../agents/agents.sql.js";
import { createTree } from "../agents/tree.js";
import type { Bus } from "../bus/bus.js";
import { listenUrlFor, loadConfig, type Config } from "../config/config.js";
import type { ApproveMode } from "../policy/policy.js";
import { closeDb, type Db } from "../db/client.js";
import type { Tui } from "../ui/app.js";
import type { Runtime } from "../runtime/pool.js";
import type { Io } from "./command.js";
import { treeOrLatest, withDatabase } from "./scope.js";

export interface StartOptions {
  newTree: boolean;
  tree: string | undefined;
  /** `--approve`: a new tree records it; an opened tree is switched to it. */
  approve?: ApproveMode;
}

/**
 * The modules the first frame needs, loaded only for the TUI and while the database opens (the
 * worker pool's loads after the frame).
 */
function loadTuiModules() {
  return Promise.all([
    import("../bus/bus.js"),
    import("../ui/app.js"),
    import("../ui/failure.js"),
  ]).then(([bus, app, failure]) => ({
    createBus: bus.createBus,
    startTui: app.startTui,
    describeFailure: failure.describeFailure,
  }));
}

type TuiModules = Awaited<ReturnType<typeof loadTuiModules>>;

export async function runStart(options: StartOptions, io: Io): Promise<number> {
  // The person starts warren here: instruction and agent files never recorded are theirs.
  const unrecorded = acceptFilesAtStart(process.cwd(), io.env);
  if (unrecorded) io.err(`warren: ${unrecorded}`);
  // Validated now so a broken config file is reported before anything else.
  const config = loadConfig(io.env);
  const tty = process.stdout.isTTY === true && process.stdin.isTTY === true;
  // Keys typed while the database opens are kept for the TUI (and not echoed or cooked).
  const held = tty ? holdKeys(process.stdin) : undefined;
  const modules = held ? loadTuiModules() : undefined;
  // A failure to open the database is the one to report; a failed load is seen when awaited.
  modules?.catch(() => undefined);
  try {
    await withDatabase(io.env, async (db, url) => {
      const warnings = createWarningRelay();
      // The listener connects while the tree is read (a failure is reported once awaited).
      const bus = modules?.then((m) =>
        m.createBus(listenUrlFor(config, url), { onWarning: warnings.warn }),
      );
      bus?.catch(() => undefined);
      try {
        const root = await openRoot(db, options, config);
        if (!held || !modules || !bus) {
          const { printTree } = await import("./ls.js");
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
        const typedAhead = held.release();
        await runTuiSession(
          { db, url, config, root, io, typedAhead, bus, warnings },
          await modules,
        );
      } finally {
        await bus?.then((b) => b.close()).catch(() => undefined);
      }
    });
  } finally {
    held?.restore();
  }
  return 0;
}

/** The tree to open (a new one with --new or when there is none), with --approve applied. */
async function openRoot(db: Db, options: StartOptions, config: Config): Promise<AgentRow> {
  const root = options.newTree ? undefined : await treeOrLatest(db, options.tree);
  if (root && options.approve) {
    await db.update(agents).set({ approve: options.approve }).where(eq(agents.id, root.id));
  }
  return (
    root ??
    createTree(db, {
      cwd: process.cwd(),
      model: config.model.name ?? null,
      budget: config.rootBudget,
      approve: options.approve ?? config.approve ?? "ask",
    })
  );
}

interface Session {
  db: Db;
  url: string;
  config: Config;
  root: AgentRow;
  io: Io;
  typedAhead: string;
  /** The listener while it connects: the TUI's first frame does not wait for it. */
  bus: Promise<Bus>;
  warnings: WarningRelay;
}

/** What the TUI shows as a warning (the listener's warnings go there). */
type Warning = Parameters<Tui["warn"]>[0];

interface WarningRelay {
  warn(warning: Warning): void;
  /** From now on warnings go to `warn`, the kept ones first. */
  showIn(warn: (warning: Warning) => void): void;
}

/** Warnings from before the TUI is up (the listener's) are kept and shown once it is. */
function createWarningRelay(): WarningRelay {
  let early: Warning[] | undefined = [];
  let shown: (warning: Warning) => void = () => {};
  return {
    warn: (warning) => void (early ? early.push(warning) : shown(warning)),
    showIn(warn) {
      shown = warn;
      early?.forEach(warn);
      early = undefined;
    },
  };
}

/** The TUI on `root`, with this process's worker threads running the tree's agents once it is up. */
async function runTuiSession(session: Session, modules: TuiModules): Promise<void> {
  const { db, url, config, root, io, bus } = session;
  const { startTui, describeFailure } = modules;
  let hungUp = false;
  let runtime: Promise<Runtime> | undefined;
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
      // `/trust`: the threads running the tree's agents take the newly trusted settings.
      onConfigChange: (next) =>
        void runtime?.then(
          (r) => r.reconfigure(next),
          () => undefined,
        ),
    });
    session.warnings.showIn(tui.warn);
    // The first frame is on the screen: now the threads may load (they take seconds of CPU).
    runtime = import("../runtime/pool.js").then(({ startRuntime }) =>
      startRuntime({ url, config, treeId: root.id, yieldToMain: true, onWarning: tui.warn }),
    );
    runtime.catch((error: unknown) =>
      tui.warn({
        kind: "notice",
        text: `agents cannot run in this process: ${describeFailure(error)}`,
      }),
    );
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
    await runtime?.then((r) => r.stop()).catch(() => undefined);
  }
  if (hungUp) {
    // The terminal is gone: Node's exit would try to restore its modes and abort on the dead
    // descriptor (a native assertion). Everything is stopped and saved by now, so leave hard.
    await (await bus).close();
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
