// The TUI application: wires stdin (our key parser), the controller (state from the feed), the
// actions (input and commands) and the layout, and paints in coalesced frames (at most one per
// 30 ms; a key paints at once).
import type { AgentRow } from "../agents/agents.sql.js";
import { agentCost, formatUsd, treeCost, type Pricing } from "../agents/cost.js";
import type { Bus } from "../bus/bus.js";
import { modelProblem, type Config } from "../config/config.js";
import type { Db } from "../db/client.js";
import { openFeed } from "../feed/feed.js";
import { createNotifier } from "./notify.js";
import { searchTree, type SearchHit } from "../search/search.js";
import { createActions, treeLines } from "./actions.js";
import { completeInput } from "./completion.js";
import { createController, UNREACHABLE } from "./controller.js";
import { describeFailure, isDatabaseTrouble } from "./failure.js";
import { createInputEditor, createInputHistory, type InputHistory } from "./input-editor.js";
import {
  createKeyParser,
  MODIFY_KEYS_OFF,
  MODIFY_KEYS_ON,
  MOUSE_OFF,
  MOUSE_ON,
  PASTE_OFF,
  PASTE_ON,
  type KeyEvent,
} from "./keys.js";
import { deadInputLine, keysHint, promptFor, renderBars, renderWaitLayer } from "./frame.js";
import { createLayout, MAX_INPUT_ROWS } from "./layout.js";
import { bottomAnchor, grownBelow, type Anchor } from "./scroll-anchor.js";
import {
  lastEventId,
  linesBelowEvent,
  openSearch,
  scrollToEvent,
  searchKey,
  type SearchState,
} from "./search.js";
import { renderSearchResults } from "./views/search-results.js";
import { filterAgents, NEED_TEXT, nextNeeding, panelKeys } from "./views/agent-filter.js";
import {
  approvalMarks,
  paint,
  renderApprovalBlock,
  createScrollbackView,
  navigate,
  renderAgentPanel,
  renderHelp,
  renderSpinner,
  renderTooSmall,
  renderWelcome,
  asciiWanted,
  MIN_HEIGHT,
  MIN_WIDTH,
  type Direction,
  type ScrollEntry,
  type Theme,
} from "./views/index.js";
import { GLYPH } from "./views/glyphs.js";
import { ROLE } from "./views/theme.js";

export const PANEL_KEY = "Ctrl+T";
export const MOUSE_KEY = "Ctrl+O";
const FRAME_MS = 30;
const QUIT_WINDOW_MS = 2000;
/** How long a switch to another agent may wait for its history before painting it empty. */
const SWITCH_GRACE_MS = 150;
/** A database warning keeps "reconnecting…" in the status bar this long (retries repeat it). */
const TROUBLE_MS = 10_000;

export interface TuiOptions {
  db: Db;
  bus: Bus;
  config: Config;
  root: AgentRow;
  env: Record<string, string | undefined>;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  /** Keys typed before the TUI was up, handled as if typed now. */
  typedAhead?: string;
  /** Called after each painted frame; `screenText` reads the screen buffer's rows. */
  onFrame?: (screenText: () => string[]) => void;
}

export interface Tui {
  /** Resolves when the person quits (/exit, Ctrl+C twice). */
  done: Promise<void>;
  /**
   * A warning from elsewhere (the runtime, the listener): database trouble goes to the status bar
   * (once, until the connection is back), anything else is a notice in the current view.
   */
  warn(message: string): void;
  close(): Promise<void>;
}

export async function startTui(options: TuiOptions): Promise<Tui> {
  const { db, bus, config, root, stdin, stdout } = options;
  const pricing: Pricing = { prices: config.prices, model: config.model.name };
  const theme: Theme = { color: !options.env.NO_COLOR, ascii: asciiWanted(options.env) };
  const feed = await openFeed(db, bus, root.id);
  const layout = createLayout({ output: stdout, ascii: theme.ascii });
  // Tool lines name agents by the rows the controller keeps (created below, before any paint).
  const agentName = (id: string) =>
    (controller.state.agents.get(id) ?? controller.state.reaped.get(id))?.name;
  const scrollbackView = createScrollbackView(theme, { names: agentName });
  /** Agents known when the cached layouts were made: one more, and they are made again. */
  let namesKnown = 0;
  const editor = createInputEditor();
  const histories = new Map<string, InputHistory>();
  const drafts = new Map<string, string>();
  const parser = createKeyParser();

  let dirty = true;
  let frameTimer: NodeJS.Timeout | undefined;
  let scroll = 0;
  let troubleUntil = 0;
  const noticed = new Map<string, number>();
  let paintedId = root.id;
  let anchor: Anchor | undefined;
  let panelOpen = false;
  let panelSelected = root.id;
  let panelOrder: string[] = [];
  /** Typed while the panel is open: only agents matching it are listed. */
  let panelFilter = "";
  let mouseOn = true;
  /** The search result list, while open; its query's number (a newer query's answer wins). */
  let search: SearchState | undefined;
  let searchSeq = 0;
  /** The event a search hit jumps to, until it is loaded and scrolled into view. */
  let jump: { agentId: string; eventId: number } | undefined;
  /** Viewing a window of older history (search): its newest event at the last paint. */
  let windowBottom: number | undefined;
  let flash: { text: string; until: number } | undefined;
  let lastCtrlC = 0;
  /** The approval request whose deny reason the input is taking (after `n`). */
  let denying: number | undefined;
  let spinnerFrame = 0;
  let closed = false;
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => (finish = resolve));

  /** Frames throttle, not delay: the first change paints at once, a burst at most every FRAME_MS. */
  let lastPaint = 0;
  let graceTimer: NodeJS.Timeout | undefined;
  const requestPaint = () => {
    dirty = true;
    if (frameTimer || closed) return;
    frameTimer = setTimeout(
      () => {
        frameTimer = undefined;
        if (dirty) paintFrame();
      },
      Math.max(0, lastPaint + FRAME_MS - Date.now()),
    );
  };

  /**
   * Typing echoes at once: keys paint on the next turn of the event loop instead of waiting for
   * the frame timer (feed updates still share frames, so 50 streaming agents cost one paint).
   */
  let echoing: NodeJS.Immediate | undefined;
  const echo = () => {
    if (!dirty || echoing || closed) return;
    echoing = setImmediate(() => {
      echoing = undefined;
      clearTimeout(frameTimer);
      if (echoing) clearImmediate(echoing);
      clearTimeout(graceTimer);
      frameTimer = undefined;
      if (dirty && !closed) paintFrame();
    });
  };

  const controller = createController({
    db,
    feed,
    rootId: root.id,
    onChange: requestPaint,
    onError: (message) => controller.notice(message, "error"),
    onResync: () => {
      troubleUntil = 0;
    },
  });
  const actions = createActions({
    db,
    config,
    controller,
    helpLines: () => renderHelp(PANEL_KEY, MOUSE_KEY),
    treeLines: () => treeLines([...controller.state.agents.values()], controller.state.currentId),
    search: (query) => startSearch(query),
    quit: () => void quit(),
    onChange: requestPaint,
  });

  const historyOf = (agentId: string) => {
    let history = histories.get(agentId);
    if (!history) histories.set(agentId, (history = createInputHistory()));
    return history;
  };

  const setFlash = (text: string, ms = QUIT_WINDOW_MS) => {
    flash = { text, until: Date.now() + ms };
    requestPaint();
    setTimeout(requestPaint, ms + 10).unref();
  };

  /** Runs an async action; a failure becomes a notice, never an unhandled rejection. */
  const spawn = (action: () => Promise<unknown>): Promise<unknown> =>
    action().catch((error: unknown) =>
      controller.notice(
        error instanceof Error ? error.message.split("\n")[0]! : String(error),
        "error",
      ),
    );
  /** The chain of submitted lines and commands (see the Enter key). */
  let submitted: Promise<unknown> = Promise.resolve();

  /** Each agent keeps its own unsent draft. */
  const switchDraft = (agentId: string) => {
    if (agentId === controller.state.currentId) return;
    drafts.set(controller.state.currentId, editor.value());
    editor.set(drafts.get(agentId) ?? "");
    drafts.delete(agentId);
  };

  const go = (agentId: string | undefined) => {
    if (!agentId || agentId === controller.state.currentId) return;
    scroll = 0;
    switchDraft(agentId);
    spawn(() => controller.view(agentId));
  };

  /** /search TEXT: the result list opens at once and fills when the query answers. */
  const startSearch = (query: string) => {
    const mine = ++searchSeq;
    search = openSearch(query);
    requestPaint();
    searchTree(db, root.id, query).then(
      (hits) => {
        if (search && mine === searchSeq) search = { ...search, hits };
        requestPaint();
      },
      (error: unknown) => {
        if (search && mine === searchSeq) {
          search = { ...search, hits: [], error: `search failed: ${describeFailure(error)}` };
        }
        requestPaint();
      },
    );
  };

  /** Enter on a hit: its agent's history around the event, scrolled to it once loaded. */
  const jumpTo = (hit: SearchHit) => {
    search = undefined;
    switchDraft(hit.agent_id);
    scroll = 0;
    jump = { agentId: hit.agent_id, eventId: hit.event_id };
    spawn(() => controller.view(hit.agent_id, hit.event_id));
  };

  const move = (dir: Direction) => {
    const target = navigate([...controller.state.agents.values()], controller.state.currentId, dir);
    if (!target) {
      const what = {
        parent: "no parent",
        child: "no children",
        prev: "no siblings",
        next: "no siblings",
      };
      setFlash(what[dir], 1200);
      return;
    }
    go(target);
  };

  const notifier = createNotifier({
    enabled: config.notify,
    setTitle: (title) => layout.screen.program.setTitle(title),
    bell: () => layout.screen.program.write("\x07"),
    // blessed's _twrite wraps a sequence in tmux's passthrough when inside tmux.
    osc: (sequence) =>
      (layout.screen.program as unknown as { _twrite(text: string): void })._twrite(sequence),
  });

  function paintFrame(): void {
    // An agent just switched to shows once its history is loaded (a few ms), not blank first.
    const loading = controller.state.loadingSince;
    if (loading !== undefined && Date.now() - loading < SWITCH_GRACE_MS) {
      dirty = true;
      clearTimeout(graceTimer);
      graceTimer = setTimeout(
        () => {
          if (dirty && !closed) paintFrame();
        },
        loading + SWITCH_GRACE_MS - Date.now(),
      );
      return;
    }
    dirty = false;
    lastPaint = Date.now();
    const width = layout.width();
    const height = layout.height();
    if (width < MIN_WIDTH || height < MIN_HEIGHT) {
      layout.paint({ ...emptyFrame(), tooSmall: renderTooSmall(width, height) });
      return;
    }
    const state = controller.state;
    notifier.update(state);
    if (state.currentId !== paintedId) {
      // Another agent (by a key, the panel, /fork, /kill or /reap): start at its bottom.
      paintedId = state.currentId;
      scroll = 0;
      anchor = undefined;
      windowBottom = undefined;
    }
    const now = Date.now();
    const agents = [...state.agents.values()];
    const current = controller.current() ?? root;
    const dead = current.state === "dead";
    const marks = approvalMarks(agents, state.approvals);
    const asking = marks.own.get(current.id) ?? [];
    // Answered elsewhere (another TUI, the CLI) or another agent shown: the reason prompt goes.
    if (denying !== undefined && !asking.some((a) => a.id === denying)) denying = undefined;
    const statusLayer = [
      ...renderApprovalBlock(
        asking,
        width,
        theme,
        denying !== undefined ? { reasonFor: denying } : {},
      ),
      ...renderWaitLayer(current, state.agents, now, width, theme, marks),
    ];
    const spinner = renderSpinner(current, spinnerFrame, width, theme);
    const input =
      editor.isEmpty() && dead
        ? [deadInputLine(theme)]
        : editor.render(
            width,
            MAX_INPUT_ROWS,
            denying !== undefined
              ? {
                  text: `deny ${denying} reason ${GLYPH.selected} `,
                  painted: paint(theme, `deny ${denying} reason ${GLYPH.selected} `, ROLE.alarm),
                }
              : promptFor(actions.mode, dead, theme),
            !panelOpen,
          ).lines;
    const rows = layout.scrollbackRows({
      statusLayer: statusLayer.length,
      spinner: spinner !== "",
      input: input.length,
    });
    const entries = controller.entries();
    if (state.agents.size + state.reaped.size !== namesKnown) {
      namesKnown = state.agents.size + state.reaped.size;
      scrollbackView.forget();
    }
    // Scrolled up to read: what arrives below pushes the window up by as much, so it stays put.
    const lineCount = (entry: ScrollEntry) => scrollbackView.lines(entry, width).length;
    if (windowBottom !== undefined) scroll += linesBelowEvent(entries, windowBottom, lineCount);
    else if (scroll > 0) scroll += grownBelow(anchor, entries, lineCount);
    anchor = bottomAnchor(entries, lineCount);
    if (jump && jump.agentId !== state.currentId) jump = undefined;
    const jumpScroll = jump && scrollToEvent(entries, jump.eventId, lineCount, rows);
    if (jumpScroll !== undefined) {
      scroll = jumpScroll;
      jump = undefined;
    }
    windowBottom = state.hasNewer ? lastEventId(entries) : undefined;
    const welcome =
      entries.length === 0 &&
      !state.hasOlder &&
      state.loadingSince === undefined &&
      state.agents.has(current.id);
    const scrolled = welcome
      ? { lines: welcomeLines(current, agents.length, width), maxScroll: 0, atTop: false }
      : scrollbackView.render(entries, width, rows, scroll);
    scroll = Math.min(scroll, scrolled.maxScroll);
    if (scrolled.atTop && state.hasOlder) spawn(() => controller.loadOlder());
    if (scroll === 0 && state.hasNewer && !jump) spawn(() => controller.loadNewer());
    let panel: string[] | undefined;
    if (panelOpen) {
      const size = layout.panelSize();
      const listed = filterAgents(agents, panelFilter);
      const render = () =>
        renderAgentPanel(
          listed,
          panelSelected,
          now,
          size.width,
          size.height,
          theme,
          panelTitle(agents),
          marks,
          (agent) => agentCost(agent, pricing.prices, pricing.model),
        );
      let rendered = render();
      // The filter hid the selected agent: select the first one listed.
      if (!rendered.order.includes(panelSelected) && rendered.order[0]) {
        panelSelected = rendered.order[0];
        rendered = render();
      }
      panel = rendered.lines;
      panelOrder = rendered.order;
    } else if (search) {
      const size = layout.panelSize();
      panel = renderSearchResults(search, new Date(now), size.width, size.height, theme);
    }
    const hint = flash && flash.until > now ? flash.text : keysHint(scroll, mouseOn);
    layout.paint({
      scrollback: scrolled.lines,
      statusLayer,
      spinner,
      input,
      ...renderBars({
        agents,
        reaped: state.reaped.values(),
        root: state.agents.get(root.id) ?? root,
        current,
        mode: dead ? "dead" : actions.mode,
        keysHint: hint,
        problem: state.problem ?? (troubleUntil > now ? UNREACHABLE : undefined),
        approvals: marks.total,
        pricing,
        width,
        theme,
      }),
      ...(panel ? { panel } : {}),
    });
    options.onFrame?.(() => layout.screenText());
  }

  /** The panel's title, with the tree's cost (reaped agents included) when a price is known. */
  const panelTitle = (agents: AgentRow[]) => {
    const reaped = controller.state.reaped.values();
    const usd = treeCost([...agents, ...reaped], pricing.prices, pricing.model);
    if (usd === undefined) return ` agents${panelKeys(panelFilter)}`;
    return ` agents · tree ${formatUsd(usd)}${panelKeys(panelFilter)}`;
  };

  /** The first screen of an agent without history (see views/welcome.ts). */
  const welcomeLines = (current: AgentRow, agents: number, width: number) =>
    renderWelcome(
      {
        agent: current,
        ...(config.model.name ? { model: config.model.name } : {}),
        ...(config.model.baseURL ? { baseURL: config.model.baseURL } : {}),
        ...(modelProblem(config.model) ? { problem: modelProblem(config.model)! } : {}),
        agents,
        panelKey: PANEL_KEY,
      },
      width,
      theme,
    );

  const scrollBy = (lines: number) => {
    scroll = Math.max(0, scroll + lines);
    requestPaint();
  };

  async function complete(): Promise<void> {
    const result = await completeInput(editor.value(), () => actions.modelNames());
    if (result.text !== undefined) editor.set(result.text);
    if (result.hint) setFlash(result.hint, 3000);
    requestPaint();
  }

  function onPanelKey(event: KeyEvent): void {
    if (event.type === "text") {
      panelFilter += event.text;
      return requestPaint();
    }
    if (event.type !== "key") return;
    const at = Math.max(0, panelOrder.indexOf(panelSelected));
    if (event.name === "up") panelSelected = panelOrder[Math.max(0, at - 1)] ?? panelSelected;
    else if (event.name === "down")
      panelSelected = panelOrder[Math.min(panelOrder.length - 1, at + 1)] ?? panelSelected;
    else if (event.name === "enter") {
      panelOpen = false;
      go(panelSelected);
    } else if (event.ctrl && event.name === "g") {
      panelOpen = false;
      goToOldestRequest();
    } else if (event.ctrl && event.name === "n") {
      panelOpen = false;
      goToNextNeeding();
    } else if (event.name === "backspace") {
      panelFilter = Array.from(panelFilter).slice(0, -1).join("");
    } else if (event.name === "escape" && panelFilter) {
      panelFilter = "";
    } else if (
      event.name === "escape" ||
      (event.ctrl && (event.name === "t" || event.name === "c"))
    ) {
      panelOpen = false;
    }
    requestPaint();
  }

  /** The viewed agent's open requests, oldest first. */
  const askingHere = () =>
    controller.state.approvals.filter((a) => a.agent_id === controller.state.currentId);

  /**
   * y / a / n answer the oldest request shown while the input is empty (typed text is text
   * otherwise); n then takes a one-line reason in the input. True when the key was an answer.
   */
  function onApprovalKey(text: string): boolean {
    const request = askingHere()[0];
    if (!request || !editor.isEmpty() || denying !== undefined || actions.mode !== "normal") {
      return false;
    }
    if (text === "y" || text === "a") {
      spawn(() => actions.answer(request.id, true, { tree: text === "a" }));
      return true;
    }
    if (text === "n") {
      denying = request.id;
      return true;
    }
    return false;
  }

  /** Enter sends the deny reason typed (empty: none); Escape goes back to the keys. */
  function onReasonKey(event: KeyEvent): boolean {
    if (denying === undefined || event.type !== "key") return false;
    if (event.name === "escape" && !event.ctrl) {
      denying = undefined;
      editor.clear();
      return true;
    }
    if (event.name === "enter" && !event.shift && !event.meta) {
      const id = denying;
      const reason = editor.value().trim();
      denying = undefined;
      editor.clear();
      spawn(() => actions.answer(id, false, reason ? { reason } : {}));
      return true;
    }
    return false;
  }

  /** The jump key: to the agent whose request is the tree's oldest. */
  function goToOldestRequest(): void {
    const oldest = controller.state.approvals[0];
    if (!oldest) return setFlash("no approval requests", 1200);
    if (oldest.agent_id === controller.state.currentId) return;
    go(oldest.agent_id);
  }

  function onSearchKey(event: KeyEvent): void {
    if (!search) return;
    const page = Math.max(1, layout.panelSize().height - 1);
    const { state: next, action } = searchKey(search, event, page);
    search = next;
    if (action.type === "close") search = undefined;
    else if (action.type === "jump") jumpTo(action.hit);
    requestPaint();
  }

  /** The next agent (in the panel's order, after the viewed one) that needs the person. */
  function goToNextNeeding(): void {
    const state = controller.state;
    const agents = [...state.agents.values()];
    const marks = approvalMarks(agents, state.approvals);
    const next = nextNeeding(agents, state.currentId, state.needs, marks);
    if (!next) return setFlash("no agent needs you", 1200);
    setFlash(`${next.agent.name}: ${NEED_TEXT[next.need]}`, 2000);
    go(next.agent.id);
  }

  function onKey(event: KeyEvent): void {
    if (panelOpen) return onPanelKey(event);
    if (search) return onSearchKey(event);
    const state = controller.state;
    if (onReasonKey(event)) return requestPaint();
    switch (event.type) {
      case "text":
        if (onApprovalKey(event.text)) break;
        editor.insert(event.text);
        break;
      case "paste":
        editor.paste(event.text);
        break;
      case "mouse":
        if (event.action === "wheelup") scrollBy(3);
        if (event.action === "wheeldown") scrollBy(-3);
        return;
      case "key": {
        const { name, ctrl, meta, shift } = event;
        if (ctrl && name === "c") {
          if (Date.now() - lastCtrlC < QUIT_WINDOW_MS) return void quit();
          lastCtrlC = Date.now();
          spawn(() => actions.interrupt());
          setFlash("Ctrl+C again to quit");
          return;
        }
        if (name === "escape" && !ctrl) {
          spawn(async () => {
            if (!(await actions.interrupt())) setFlash("nothing to interrupt", 1200);
          });
          return;
        }
        // Ctrl+X stops the viewed agent and all its descendants (as /stop); Escape only the agent.
        if (ctrl && name === "x") {
          spawn(() => actions.stop());
          return;
        }
        if (ctrl && name === "up") return move("parent");
        if (ctrl && name === "down") return move("child");
        if (ctrl && name === "left") return move("prev");
        if (ctrl && name === "right") return move("next");
        if (ctrl && name === "t") {
          panelOpen = true;
          panelSelected = state.currentId;
          panelFilter = "";
          break;
        }
        if (ctrl && name === "g") {
          goToOldestRequest();
          break;
        }
        if (ctrl && name === "n") {
          goToNextNeeding();
          break;
        }
        if (ctrl && name === "f") {
          // The search prompt: text already typed becomes the query.
          const typed = editor.value();
          if (!/^\s*\/search\b/.test(typed)) editor.set(`/search ${typed.trimStart()}`);
          setFlash("Enter searches every agent's transcript in this tree", 3000);
          break;
        }
        if (ctrl && name === "o") {
          mouseOn = !mouseOn;
          stdout.write(mouseOn ? MOUSE_ON : MOUSE_OFF);
          break;
        }
        if (ctrl && name === "l") {
          layout.screen.realloc();
          break;
        }
        if (name === "enter" && !shift && !meta) {
          const text = editor.value();
          if (!text.trim()) break;
          historyOf(state.currentId).add(text);
          editor.clear();
          scroll = 0;
          // Submissions run one after another, in the order typed: a captured line is saved
          // before the /fork typed after it reads the capture.
          submitted = submitted.then(() =>
            spawn(async () => {
              // A message that could not be saved goes back into the input: nothing typed is lost.
              if (!(await actions.submit(text)) && editor.isEmpty()) {
                editor.set(text);
                requestPaint();
              }
            }),
          );
          break;
        }
        if (name === "enter" || name === "newline") editor.newline();
        else if (name === "tab") spawn(complete);
        else if (name === "backspace") editor.backspace();
        else if (name === "delete" || (ctrl && name === "d")) editor.deleteForward();
        else if (name === "left") (meta ? editor.wordLeft : editor.left)();
        else if (name === "right") (meta ? editor.wordRight : editor.right)();
        else if (name === "home" || (ctrl && name === "a")) editor.home();
        else if (name === "end" || (ctrl && name === "e")) editor.end();
        else if (ctrl && name === "u") editor.clear();
        else if (name === "pageup") scrollBy(Math.max(1, layout.height() - 8));
        else if (name === "pagedown") scrollBy(-Math.max(1, layout.height() - 8));
        else if (name === "up" && shift) scrollBy(1);
        else if (name === "down" && shift) scrollBy(-1);
        else if (name === "up") {
          if (!editor.up()) {
            const older = historyOf(state.currentId).older(editor.value());
            if (older !== undefined) editor.set(older);
          }
        } else if (name === "down") {
          if (!editor.down()) {
            const newer = historyOf(state.currentId).newer();
            if (newer !== undefined) editor.set(newer);
          }
        }
        break;
      }
    }
    requestPaint();
  }

  let escapeTimer: NodeJS.Timeout | undefined;
  const onData = (chunk: string) => {
    clearTimeout(escapeTimer);
    for (const event of parser.feed(chunk)) onKey(event);
    echo();
    if (parser.pending()) {
      // A lone ESC (or a sequence cut by the terminal): wait briefly for the rest.
      escapeTimer = setTimeout(() => parser.flush().forEach(onKey), 40);
    }
  };

  // Spinner and "time since" move on their own; a slow tick when nothing is busy.
  const ticker = setInterval(() => {
    spinnerFrame++;
    const current = controller.current();
    if (current && (current.state === "running" || current.state === "waiting")) requestPaint();
    else if (spinnerFrame % 10 === 0) requestPaint();
  }, 100);

  async function quit(): Promise<void> {
    if (closed) return;
    closed = true;
    clearInterval(ticker);
    clearTimeout(frameTimer);
    clearTimeout(escapeTimer);
    stdin.off("data", onData);
    controller.close();
    stdout.write(PASTE_OFF + MOUSE_OFF + MODIFY_KEYS_OFF);
    layout.destroy();
    if (stdin.isTTY) stdin.setRawMode(false);
    stdin.pause();
    await feed.close().catch(() => undefined);
    finish();
  }

  // Terminal modes: raw keys, bracketed paste, wheel events; blessed owns the alternate screen.
  if (stdin.isTTY) stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.on("data", onData);
  stdin.resume();
  stdout.write(PASTE_ON + MODIFY_KEYS_ON + (mouseOn ? MOUSE_ON : ""));
  layout.screen.program.hideCursor();
  layout.onResize(() => {
    scrollbackView.forget();
    requestPaint();
  });
  requestPaint();
  await controller.start();
  if (options.typedAhead) onData(options.typedAhead);
  requestPaint();

  return {
    done,
    warn: (message) => {
      const now = Date.now();
      if (isDatabaseTrouble(message)) {
        // Workers and the listener repeat these while they retry: one status-bar line, not a flood.
        troubleUntil = now + TROUBLE_MS;
        requestPaint();
        setTimeout(requestPaint, TROUBLE_MS + 10).unref();
        return;
      }
      if ((noticed.get(message) ?? 0) > now) return;
      noticed.set(message, now + TROUBLE_MS * 3);
      controller.notice(message, "error");
    },
    close: quit,
  };
}

function emptyFrame() {
  return { scrollback: [], statusLayer: [], spinner: "", separator: "", input: [], statusBar: "" };
}
