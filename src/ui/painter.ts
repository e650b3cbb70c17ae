// One frame from state: the controller's rows and the view state in, the layout's widgets filled.
// Only the frame clock (frame.ts) calls paint; painting settles the scroll (kept still while
// scrolled up, moved to a search hit once it is loaded) and hands the view state back.
import type { AgentRow } from "../agents/agents.sql.js";
import { setupSources, type SetupSource } from "../runtime/setup-sources.js";
import { agentCost, formatUsd, type Pricing } from "../agents/cost.js";
import { modelProblem, type Config } from "../config/config.js";
import { wordWarning, type Warning } from "../db/warning.js";
import { BUILTIN_NAMES } from "./commands/table.js";
import type { Controller } from "./controller.js";
import {
  deadInputLine,
  keysHint,
  promptFor,
  renderBars,
  renderWaitLayer,
  shortKeysHint,
} from "./frame-parts.js";
import type { InputEditor } from "./input-editor.js";
import { MAX_INPUT_ROWS, type Layout } from "./layout.js";
import type { Notifier } from "./notify.js";
import { bottomAnchor, grownBelow, type Anchor } from "./scroll-anchor.js";
import { lastEventId, linesBelowEvent, scrollToEvent } from "./search.js";
import { createTreeFigures } from "./tree-figures.js";
import { flashText, updateView, type ViewState } from "./view-state.js";
import { filterAgents, panelKeys } from "./views/agent-filter.js";
import { approvalRoom } from "./views/approvals.js";
import { GLYPH } from "./views/glyphs.js";
import { groupCalls } from "./views/tool-group.js";
import {
  byAge,
  createScrollbackView,
  spinnerGlyph,
  paint,
  renderAgentPanel,
  renderApprovalBlock,
  renderSpinner,
  renderTooSmall,
  renderWelcome,
  MIN_HEIGHT,
  MIN_WIDTH,
  type ScrollEntry,
  type Theme,
  type WelcomeInfo,
} from "./views/index.js";
import { renderRewindPicker } from "./views/rewind-picker.js";
import { foldKeys, foldRewound } from "./views/rewound-fold.js";
import { renderSearchResults } from "./views/search-results.js";
import { renderTaskBoard } from "./views/task-board.js";
import type { TaskEntry } from "../tasks/board.js";
import type { TaskCounts } from "./views/status-bar.js";
import { ROLE, type Line } from "./views/theme.js";

/** How long a switch to another agent may wait for its history before painting it empty. */
export const SWITCH_GRACE_MS = 150;

export interface PainterOptions {
  layout: Layout;
  controller: Controller;
  editor: InputEditor;
  theme: Theme;
  config: Config;
  root: AgentRow;
  notifier: Notifier;
  /** The input's mode (capture mode changes the prompt). */
  mode: () => "normal" | "capture";
  /** Runs a read the frame found necessary (older or newer history), its failure a notice. */
  spawn: (action: () => Promise<unknown>) => void;
  /** The panel key the welcome screen names. */
  panelKey: string;
  /** The first screen's database, sandbox and model server lines, once known. */
  checks?: () => WelcomeInfo["checks"];
  onFrame?: (screenText: () => string[]) => void;
}

export interface Painter {
  /**
   * Paints `view`; returns the view state as the frame settled it, or, while a switched-to agent's
   * history is still loading (a few ms), the ms to wait before painting it empty.
   */
  paint(view: ViewState, spinnerFrame: number): ViewState | number;
  /** Drops the cached layouts (the width changed). */
  forget(): void;
}

export function createPainter(options: PainterOptions): Painter {
  const { layout, controller, editor, theme, config, root } = options;
  const pricing: Pricing = { prices: config.prices, model: config.model.name };
  // Tool lines name agents by the rows the controller keeps.
  const agentName = (id: string) =>
    (controller.state.agents.get(id) ?? controller.state.reaped.get(id))?.name;
  // A fan-in's rows in fork order: each agent's place among the tree's rows sorted by byAge.
  let ranks: { version: number; of: Map<string, number> } | undefined;
  const agentOrder = (id: string) => {
    const state = controller.state;
    if (ranks?.version !== state.treeVersion) {
      const sorted = [...state.agents.values(), ...state.reaped.values()].sort(byAge);
      ranks = { version: state.treeVersion, of: new Map(sorted.map((a, i) => [a.id, i])) };
    }
    return ranks.of.get(id);
  };
  const scrollbackView = createScrollbackView(theme, { names: agentName, order: agentOrder });
  /** Agents known when the cached layouts were made: one more, and they are made again. */
  let namesKnown = 0;
  let paintedId = root.id;
  let anchor: Anchor | undefined;
  /** Viewing a window of older history (search): its newest event at the last paint. */
  let windowBottom: number | undefined;
  let painted = false;

  const tree = createTreeFigures(controller.state, pricing);

  /** The panel's title, with the tree's cost (reaped agents included) when a price is known. */
  const panelTitle = (filter: string) => {
    const usd = tree.figures().cost;
    if (usd === undefined) return ` agents${panelKeys(filter)}`;
    return ` agents · tree ${formatUsd(usd)}${panelKeys(filter)}`;
  };

  /** The first screen of an agent without history (see views/welcome.ts), kept while it holds. */
  let welcome: { key: string; lines: Line[] } | undefined;
  /**
   * What of the person's setup is read in a directory: files and folders are read for it, so it
   * is read again at most every 2 s, not on every frame of the first screen.
   */
  const SOURCES_REREAD_MS = 2_000;
  let sources: { cwd: string; at: number; list: SetupSource[] } | undefined;
  const sourcesFor = (cwd: string): SetupSource[] => {
    const now = Date.now();
    if (sources?.cwd !== cwd || now - sources.at > SOURCES_REREAD_MS) {
      const where = { allowHow: "/mcp allow", trustHow: "/trust", builtins: BUILTIN_NAMES };
      sources = { cwd, at: now, list: setupSources(config, cwd, process.env, where) };
    }
    return sources.list;
  };
  const welcomeLines = (current: AgentRow, agents: number, width: number) => {
    const problem = modelProblem(config.model);
    const info: WelcomeInfo = {
      agent: current,
      ...(config.model.name ? { model: config.model.name } : {}),
      ...(config.model.baseURL ? { baseURL: config.model.baseURL } : {}),
      ...(problem ? { problem } : {}),
      sources: sourcesFor(current.cwd ?? process.cwd()),
      ...(config.warnings?.length ? { warnings: config.warnings } : {}),
      agents,
      panelKey: options.panelKey,
      checks: options.checks?.(),
    };
    const { id, name, tree_id, model, cwd } = current;
    const key = JSON.stringify([width, { ...info, agent: { id, name, tree_id, model, cwd } }]);
    if (welcome?.key !== key) welcome = { key, lines: renderWelcome(info, width, theme) };
    return welcome.lines;
  };

  /** The first screen with the notices since below it, as a window `scroll` lines up from the end. */
  const welcomeWindow = (
    head: Line[],
    notices: readonly ScrollEntry[],
    width: number,
    rows: number,
    scroll: number,
  ) => {
    const below = notices.length
      ? scrollbackView.render(notices, width, Number.MAX_SAFE_INTEGER, 0).lines
      : [];
    const all = below.length ? [...head, "", ...below] : head;
    const maxScroll = Math.max(0, all.length - rows);
    const at = Math.min(Math.max(0, Math.floor(scroll)), maxScroll);
    const end = all.length - at;
    return {
      lines: all.slice(Math.max(0, end - rows), end),
      maxScroll,
      atTop: false,
      owners: [] as number[],
    };
  };

  function paintView(start: ViewState, spinnerFrame: number): ViewState | number {
    // An agent just switched to shows once its history is loaded (a few ms), not blank first;
    // the first frame never waits (the status bar and the prompt, the history when it comes).
    const loading = controller.state.loadingSince;
    if (painted && loading !== undefined && Date.now() - loading < SWITCH_GRACE_MS) {
      return loading + SWITCH_GRACE_MS - Date.now();
    }
    let view = start;
    const width = layout.width();
    const height = layout.height();
    if (width < MIN_WIDTH || height < MIN_HEIGHT) {
      layout.paint({ ...emptyFrame(), tooSmall: renderTooSmall(width, height) });
      return view;
    }
    const state = controller.state;
    options.notifier.update(state);
    let scroll = view.scroll;
    if (state.currentId !== paintedId) {
      // Another agent (by a key, the panel, /fork, /kill or /reap): start at its bottom.
      paintedId = state.currentId;
      scroll = 0;
      anchor = undefined;
      windowBottom = undefined;
    }
    const now = Date.now();
    // The panel's and the status layer's "time since" columns move on whole seconds, all at once:
    // frames between two seconds give them the same text (blessed re-parses only changed text).
    const second = now - (now % 1000);
    const figures = tree.figures();
    const agents = figures.agents;
    const current = controller.current() ?? root;
    const dead = current.state === "dead";
    const marks = tree.marks();
    const asking = marks.own.get(current.id) ?? [];
    // Answered elsewhere (another TUI, the CLI) or another agent shown: the reason prompt goes.
    if (view.denying !== undefined && !asking.some((a) => a.id === view.denying)) {
      view = updateView(view, { type: "deny-end" });
    }
    const denying = view.denying;
    const approvalBlock = renderApprovalBlock(asking, width, theme, {
      room: approvalRoom(layout.height()),
      ...(denying !== undefined ? { reasonFor: denying } : {}),
    });
    // The awaited agents get what the requests leave of the layer's room.
    const waitRows = Math.max(1, layout.statusLayerRoom() - approvalBlock.length);
    const statusLayer = [
      ...approvalBlock,
      ...renderWaitLayer(current, state.agents, second, width, theme, marks, waitRows),
    ];
    const spinner = renderSpinner(current, spinnerFrame, width, theme);
    const denyPrompt = `deny ${denying} reason ${GLYPH.selected} `;
    const input =
      editor.isEmpty() && dead
        ? [deadInputLine(theme)]
        : editor.render(
            width,
            MAX_INPUT_ROWS,
            denying !== undefined
              ? { text: denyPrompt, painted: paint(theme, denyPrompt, ROLE.alarm) }
              : promptFor(options.mode(), dead, theme),
            !view.panel,
          ).lines;
    const rows = layout.scrollbackRows({
      statusLayer: statusLayer.length,
      spinner: spinner !== "",
      input: input.length,
    });
    // Each call with its result; a call still running turns the spinner in its own row.
    const busy = current.state === "running" || current.state === "waiting";
    // Rewound events behind one line per run, unless the person opened it.
    const all = controller.entries();
    const folded = foldRewound(all, view.unfolded);
    const entries = groupCalls(folded, busy ? spinnerGlyph(spinnerFrame) : undefined);
    const foldOf = folded === all ? [] : foldKeys(entries);
    if (state.agents.size + state.reaped.size !== namesKnown) {
      namesKnown = state.agents.size + state.reaped.size;
      scrollbackView.forget();
    }
    // Scrolled up to read: what arrives below pushes the window up by as much, so it stays put.
    const lineCount = (entry: ScrollEntry) => scrollbackView.lines(entry, width).length;
    if (windowBottom !== undefined) scroll += linesBelowEvent(entries, windowBottom, lineCount);
    else if (scroll > 0) scroll += grownBelow(anchor, entries, lineCount);
    anchor = bottomAnchor(entries, lineCount);
    if (view.jump && view.jump.agentId !== state.currentId) {
      view = updateView(view, { type: "jump-done" });
    }
    const jumpScroll = view.jump && scrollToEvent(entries, view.jump.eventId, lineCount, rows);
    if (jumpScroll !== undefined) {
      scroll = jumpScroll;
      view = updateView(view, { type: "jump-done" });
    }
    windowBottom = state.hasNewer ? lastEventId(entries) : undefined;
    // The first screen holds while the agent has no events: a notice (a server that failed, a
    // file that waits) goes below it and stays, never replacing it.
    const welcome =
      entries.every((entry) => entry.kind === "notice") &&
      !state.hasOlder &&
      state.loadingSince === undefined &&
      state.agents.has(current.id);
    const scrolled = welcome
      ? welcomeWindow(welcomeLines(current, agents.length, width), entries, width, rows, scroll)
      : scrollbackView.render(entries, width, rows, scroll);
    scroll = Math.min(scroll, scrolled.maxScroll);
    view = updateView(view, { type: "scroll-to", scroll });
    // Which fold each row shows, for a click and for Enter (none: the usual history).
    const foldRows =
      foldOf.length && !welcome ? scrolled.owners.map((at) => foldOf[at]) : NO_FOLD_ROWS;
    view = updateView(view, { type: "folds-shown", rows: foldRows });
    if (scrolled.atTop && state.hasOlder) options.spawn(() => controller.loadOlder());
    if (scroll === 0 && state.hasNewer && !view.jump) options.spawn(() => controller.loadNewer());
    let panelLines: string[] | undefined;
    const panel = view.panel;
    if (panel) {
      const size = layout.panelSize();
      const listed = filterAgents(agents, panel.filter);
      const render = (selected: string) =>
        renderAgentPanel(
          listed,
          selected,
          second,
          size.width,
          size.height,
          theme,
          panelTitle(panel.filter),
          marks,
          (agent) => agentCost(agent, pricing.prices, pricing.model),
        );
      let rendered = render(panel.selected);
      let selected = panel.selected;
      // The filter hid the selected agent: select the first one listed.
      if (!rendered.order.includes(selected) && rendered.order[0]) {
        selected = rendered.order[0];
        rendered = render(selected);
      }
      panelLines = rendered.lines;
      view = updateView(view, { type: "panel-listed", order: rendered.order, selected });
    } else if (view.rewind) {
      const size = layout.panelSize();
      const state = controller.state.agents.get(view.rewind.agentId)?.state;
      panelLines = renderRewindPicker(
        view.rewind,
        state === "running" || state === "waiting",
        new Date(now),
        size.width,
        size.height,
        theme,
      );
    } else if (view.search) {
      const size = layout.panelSize();
      panelLines = renderSearchResults(view.search, new Date(now), size.width, size.height, theme);
    } else if (view.tasksOpen) {
      const size = layout.panelSize();
      panelLines = renderTaskBoard(view.tasks, size.width, size.height, theme);
    }
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
        mode: dead ? "dead" : options.mode(),
        ...hints(flashText(view, now), scroll, view.mouseOn),
        problem: outageText(
          state.outage ??
            (view.outage && view.outage.until > now ? view.outage.warning : undefined),
        ),
        approvals: marks.total,
        ...(view.tasks?.length ? { tasks: taskCounts(view.tasks) } : {}),
        pricing,
        width,
        theme,
        figures,
        nav: tree.nav(),
      }),
      ...(panelLines ? { panel: panelLines } : {}),
    });
    painted = true;
    options.onFrame?.(() => layout.screenText());
    return view;
  }

  return { paint: paintView, forget: () => scrollbackView.forget() };
}

const NO_FOLD_ROWS: readonly (number | undefined)[] = [];

/** The status bar's words for an outage, while there is one. */
function outageText(outage: Warning | undefined): string | undefined {
  return outage && wordWarning(outage, "status");
}

function emptyFrame() {
  return { scrollback: [], statusLayer: [], spinner: "", separator: "", input: [], statusBar: "" };
}

/** The status bar's right side: a flashed line as it is, else the keys hint and its short form. */
function hints(
  flash: string | undefined,
  scroll: number,
  mouseOn: boolean,
): { keysHint: string; keysHintShort?: string } {
  if (flash !== undefined) return { keysHint: flash };
  return { keysHint: keysHint(scroll, mouseOn), keysHintShort: shortKeysHint(scroll) };
}

/** The status bar's figures of the task board. */
function taskCounts(tasks: readonly TaskEntry[]): TaskCounts {
  const count = (state: TaskEntry["state"]) => tasks.filter((t) => t.state === state).length;
  return {
    total: tasks.length,
    done: count("done"),
    claimed: count("claimed"),
    blocked: count("blocked"),
    failed: count("failed"),
  };
}
