// The TUI application: wires the parts together — the feed and the controller (state from the
// database), the terminal's keys (dispatch.ts), the view state, and one frame clock that paints.
import type { AgentRow } from "../agents/agents.sql.js";
import type { Bus } from "../bus/bus.js";
import type { Config } from "../config/config.js";
import type { Db } from "../db/client.js";
import { wordWarning, type Warning } from "../db/warning.js";
import { openFeed } from "../feed/feed.js";
import { createActions, treeLines } from "./actions.js";
import { helpRows } from "./commands/table.js";
import { createController } from "./controller.js";
import { createDispatch } from "./dispatch.js";
import { createFrameClock } from "./frame.js";
import { createInputEditor } from "./input-editor.js";
import { createLayout } from "./layout.js";
import { createNotifier } from "./notify.js";
import { createPainter } from "./painter.js";
import { watchTasks } from "./task-watch.js";
import type { KeyEvent } from "./keys.js";
import { attachTerminal } from "./terminal.js";
import { initialView, updateView, type ViewEvent } from "./view-state.js";
import { asciiWanted, renderHelp, type Theme, type WelcomeInfo } from "./views/index.js";
import { writePassthrough } from "./views/blessed-lib.js";
import { firstScreenChecks } from "../runtime/health.js";
import type { StoreWatch } from "../trust-store.js";

export const PANEL_KEY = "Ctrl+T";
export const MOUSE_KEY = "Ctrl+O";
/** A database warning keeps "reconnecting…" in the status bar this long (retries repeat it). */
const OUTAGE_MS = 10_000;

export interface TuiOptions {
  db: Db;
  /** The listener, or its connecting: the first frame is drawn before the feed needs it. */
  bus: Bus | Promise<Bus>;
  config: Config;
  root: AgentRow;
  env: Record<string, string | undefined>;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  /** Keys typed before the TUI was up, handled as if typed now. */
  typedAhead?: string;
  /** `config` changed in place (`/trust`): the runtime's threads take it too. */
  onConfigChange?: (config: Config) => void;
  /** Called after each painted frame; `screenText` reads the screen buffer's rows. */
  onFrame?: (screenText: () => string[]) => void;
}

export interface Tui {
  /** Resolves when the person quits (/exit, Ctrl+C twice). */
  done: Promise<void>;
  /**
   * A warning from elsewhere (the runtime, the listener): an outage goes to the status bar (once,
   * until the connection is back), anything else is a notice in the current view.
   */
  warn(warning: Warning): void;
  close(): Promise<void>;
}

export async function startTui(options: TuiOptions): Promise<Tui> {
  const { db, bus, config, root, stdin, stdout } = options;
  const theme: Theme = { color: !options.env.NO_COLOR, ascii: asciiWanted(options.env) };
  const layout = createLayout({ output: stdout, ascii: theme.ascii });
  // The first frame (the status bar and the prompt) is drawn first; the feed opens (and the
  // history loads) once it is out, the listener connecting meanwhile. The controller starts once
  // the feed is open.
  let frameDrawn: (() => void) | undefined;
  const firstFrame = new Promise<void>((resolve) => (frameDrawn = resolve));
  const listener = firstFrame.then(() => bus);
  const feed = listener.then((l) => openFeed(db, l, root.id));
  // The task board's rows, for /tasks and the status bar's count, live.
  const taskWatch = listener.then((l) =>
    watchTasks(db, l, root.id, (tasks) => update({ type: "tasks", tasks })),
  );
  taskWatch.catch(() => undefined);
  feed.catch(() => undefined); // seen by controller.start()
  const editor = createInputEditor();
  let view = initialView();
  let spinnerFrame = 0;
  let closed = false;
  let trustWatch: StoreWatch | undefined;
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => (finish = resolve));

  // The only way anything paints: changes ask the clock, the clock calls the painter.
  const clock = createFrameClock({
    paint: () => {
      const painted = painter.paint(view, spinnerFrame);
      if (typeof painted === "number") return painted;
      view = painted;
      // Out once blessed has written it: it flushes its buffer on the next turn of the loop.
      if (frameDrawn) setImmediate(frameDrawn);
      frameDrawn = undefined;
    },
  });
  const update = (event: ViewEvent) => {
    view = updateView(view, event);
    clock.request();
  };

  const controller = createController({
    db,
    feed,
    rootId: root.id,
    onChange: clock.request,
    // What the person reads as it streams is not held back for the frame interval, and neither is
    // the history of the agent they switched to.
    onText: clock.requestText,
    onShown: clock.requestNow,
    firstPage: () => layout.height(),
    onError: (message) => controller.notice(message, "error"),
    onResync: () => update({ type: "outage-over" }),
  });
  /** Runs an async action; a failure becomes a notice, never an unhandled rejection. */
  const spawn = (action: () => Promise<unknown>): Promise<unknown> =>
    action().catch((error: unknown) =>
      controller.notice(
        error instanceof Error ? error.message.split("\n")[0]! : String(error),
        "error",
      ),
    );
  const actions = createActions({
    db,
    config,
    controller,
    helpLines: (own) => renderHelp(PANEL_KEY, MOUSE_KEY, helpRows(own)),
    treeLines: () => treeLines([...controller.state.agents.values()], controller.state.currentId),
    search: (query) => dispatch.startSearch(query),
    tasks: () => update({ type: "tasks-open" }),
    rewind: (agentId, agentName) => dispatch.startRewind(agentId, agentName),
    quit: () => void quit(),
    onChange: clock.request,
    env: options.env,
    configChanged: () => options.onConfigChange?.(config),
  });
  const notifier = createNotifier({
    enabled: config.notify,
    setTitle: (title) => layout.screen.program.setTitle(title),
    bell: () => layout.screen.program.write("\x07"),
    // Wrapped in tmux's passthrough when inside tmux.
    osc: (sequence) => writePassthrough(layout.screen, sequence),
  });
  // The first screen's database, sandbox and model server lines (runtime/health.ts), and the one
  // line said when `auto` finds no working bubblewrap. They start once the first frame and the
  // history are shown: the bubblewrap probe is a process to spawn and the model server's a first
  // fetch (loading Node's undici), tens of milliseconds that neither waits for.
  let checks: WelcomeInfo["checks"];
  const runChecks = async () => {
    const lines = await firstScreenChecks(config, options.env);
    checks = lines;
    const unconfined = lines.find((l) => l.label === "sandbox" && !l.ok);
    if (unconfined && config.sandbox.mode === "auto") {
      controller.notice(`sandbox ${unconfined.text}`, "error");
    }
    clock.request();
  };
  const painter = createPainter({
    layout,
    controller,
    editor,
    theme,
    config,
    root,
    notifier,
    mode: () => actions.mode,
    spawn,
    panelKey: PANEL_KEY,
    checks: () => checks,
    ...(options.onFrame ? { onFrame: options.onFrame } : {}),
  });
  const dispatch = createDispatch({
    db,
    rootId: root.id,
    controller,
    actions,
    editor,
    layout,
    stdout,
    clock,
    view: () => view,
    update,
    spawn,
    quit: () => void quit(),
  });

  // Spinner and "time since" move on their own; a slow tick when nothing is busy.
  const ticker = setInterval(() => {
    spinnerFrame++;
    const current = controller.current();
    if (current && (current.state === "running" || current.state === "waiting")) clock.request();
    else if (spinnerFrame % 10 === 0) clock.request();
  }, 100);

  async function quit(): Promise<void> {
    if (closed) return;
    closed = true;
    frameDrawn?.(); // no frame came: what waits for one goes on, to be closed
    clearInterval(ticker);
    trustWatch?.close();
    clock.close();
    terminal.detach();
    controller.close();
    await taskWatch.then((w) => w.close()).catch(() => undefined);
    layout.destroy();
    await feed.then((f) => f.close()).catch(() => undefined);
    finish();
  }

  layout.screen.program.hideCursor();
  layout.onResize(() => {
    painter.forget();
    clock.request();
  });
  // Blessed owns the alternate screen; we own the input (keys.ts). Its modes are on from the first
  // frame; keys typed while the tree loads wait for it, after those typed before the TUI was up.
  let early: KeyEvent[] | undefined = [];
  const terminal = attachTerminal({
    stdin,
    stdout,
    mouseOn: view.mouseOn,
    onKey: (key) => (early ? early.push(key) : dispatch.key(key)),
  });
  clock.request();
  try {
    await controller.start();
  } catch (error) {
    await quit();
    throw error;
  }
  const typedMeanwhile = early;
  early = undefined;
  if (options.typedAhead) terminal.type(options.typedAhead);
  typedMeanwhile.forEach(dispatch.key);
  clock.request();
  setImmediate(() => {
    void runChecks();
    // `warren trust` in another shell applies here as /trust does (trust-sync.ts). Started once
    // the first screen is out: what is trusted is read now, and each change told from it.
    if (!closed) trustWatch = actions.watchTrust();
  });

  const noticed = new Map<string, number>();
  return {
    done,
    warn: (warning) => {
      const now = Date.now();
      switch (warning.kind) {
        case "outage":
          // Workers and the listener repeat it while they retry: one status-bar line, no flood.
          update({ type: "outage", warning, until: now + OUTAGE_MS });
          return clock.requestIn(OUTAGE_MS + 10);
        case "outage-over":
          return update({ type: "outage-over" });
        case "notifications-off":
        case "notice": {
          const text = wordWarning(warning);
          if ((noticed.get(text) ?? 0) > now) return;
          noticed.set(text, now + OUTAGE_MS * 3);
          return controller.notice(text, "error");
        }
      }
    },
    close: quit,
  };
}
