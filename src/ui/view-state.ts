// What the TUI shows besides the feed's state: scrolling, the agent panel, the search list, the
// deny-reason prompt, flashes. One value, changed only by `updateView(state, event) → state`.
import type { Warning } from "../db/warning.js";
import type { SearchHit } from "../search/search.js";
import type { TaskEntry } from "../tasks/board.js";
import type { RewindPicker } from "./rewind-picker.js";
import { openSearch, type SearchState } from "./search.js";

export interface PanelState {
  selected: string;
  /** Typed while the panel is open: only agents matching it are listed. */
  filter: string;
  /** The agents listed at the last paint, in order (↑↓ move along it). */
  order: readonly string[];
}

export interface ViewState {
  /** Lines scrolled up from the bottom of the scrollback (0: following the newest). */
  scroll: number;
  panel: PanelState | undefined;
  /** The search result list, while open. */
  search: SearchState | undefined;
  /** The /rewind picker, while open. */
  rewind: RewindPicker | undefined;
  /** Folds of rewound events the person opened, by key (their first event's id). */
  unfolded: ReadonlySet<number>;
  /**
   * Per row of the scrollback at the last paint, the fold whose line or events it shows: a click
   * there toggles it, and Enter on an empty input toggles the lowest one (rewound-fold.ts).
   */
  foldRows: readonly (number | undefined)[];
  /** The tree's task board as last read (live: task-watch.ts); undefined until the first read. */
  tasks: readonly TaskEntry[] | undefined;
  /** The board (/tasks) is shown in the panel's place. */
  tasksOpen: boolean;
  /** The newest query's number: an older query's answer is dropped. */
  searchSeq: number;
  /** The event a search hit jumps to, until it is loaded and scrolled into view. */
  jump: { agentId: string; eventId: number } | undefined;
  /** The approval request whose deny reason the input is taking (after `n`). */
  denying: number | undefined;
  /** Wheel events on (the terminal then needs Shift held to select text). */
  mouseOn: boolean;
  /** A short message in the status bar's keys hint, until a time. */
  flash: { text: string; until: number } | undefined;
  /** When Ctrl+C was last pressed (a second one soon after quits). */
  lastCtrlC: number;
  /** An outage the runtime or the listener warned of: the status bar says so until `until`. */
  outage: { warning: Warning; until: number } | undefined;
}

export type ViewEvent =
  | { type: "scroll"; by: number }
  | { type: "scroll-to"; scroll: number }
  | { type: "panel-open"; selected: string }
  | { type: "panel-close" }
  | { type: "panel-move"; by: 1 | -1 }
  | { type: "panel-type"; text: string }
  | { type: "panel-backspace" }
  | { type: "panel-clear" }
  /** The painter listed these agents; `selected` when the filter hid the selected one. */
  | { type: "panel-listed"; order: readonly string[]; selected: string }
  | { type: "search-open"; query: string }
  | { type: "search-answer"; seq: number; hits: SearchHit[]; error?: string }
  | { type: "search-set"; search: SearchState | undefined }
  | { type: "rewind-set"; rewind: RewindPicker | undefined }
  | { type: "fold-toggle"; key: number }
  | { type: "folds-shown"; rows: readonly (number | undefined)[] }
  | { type: "tasks"; tasks: readonly TaskEntry[] }
  | { type: "tasks-open" }
  | { type: "tasks-close" }
  | { type: "jump"; agentId: string; eventId: number }
  | { type: "jump-done" }
  | { type: "deny-start"; id: number }
  | { type: "deny-end" }
  | { type: "mouse-toggle" }
  | { type: "flash"; text: string; until: number }
  | { type: "ctrl-c"; at: number }
  | { type: "outage"; warning: Warning; until: number }
  | { type: "outage-over" };

export function initialView(mouseOn = true): ViewState {
  return {
    scroll: 0,
    panel: undefined,
    search: undefined,
    rewind: undefined,
    unfolded: new Set(),
    foldRows: [],
    tasks: undefined,
    tasksOpen: false,
    searchSeq: 0,
    jump: undefined,
    denying: undefined,
    mouseOn,
    flash: undefined,
    lastCtrlC: 0,
    outage: undefined,
  };
}

export function updateView(state: ViewState, event: ViewEvent): ViewState {
  switch (event.type) {
    case "scroll":
      return { ...state, scroll: Math.max(0, state.scroll + event.by) };
    case "scroll-to":
      return { ...state, scroll: Math.max(0, event.scroll) };
    case "panel-open":
      return {
        ...state,
        tasksOpen: false,
        rewind: undefined,
        panel: { selected: event.selected, filter: "", order: [] },
      };
    case "panel-close":
      return { ...state, panel: undefined };
    case "panel-move": {
      const panel = state.panel;
      if (!panel) return state;
      const at = Math.max(0, panel.order.indexOf(panel.selected));
      const to = Math.max(0, Math.min(panel.order.length - 1, at + event.by));
      return { ...state, panel: { ...panel, selected: panel.order[to] ?? panel.selected } };
    }
    case "panel-type":
      return withPanel(state, (panel) => ({ ...panel, filter: panel.filter + event.text }));
    case "panel-backspace":
      return withPanel(state, (panel) => ({
        ...panel,
        filter: Array.from(panel.filter).slice(0, -1).join(""),
      }));
    case "panel-clear":
      return withPanel(state, (panel) => ({ ...panel, filter: "" }));
    case "panel-listed":
      return withPanel(state, (panel) => ({
        ...panel,
        order: event.order,
        selected: event.selected,
      }));
    case "search-open":
      return {
        ...state,
        tasksOpen: false,
        rewind: undefined,
        search: openSearch(event.query),
        searchSeq: state.searchSeq + 1,
      };
    case "search-answer": {
      if (!state.search || event.seq !== state.searchSeq) return state;
      const { hits, error } = event;
      return { ...state, search: { ...state.search, hits, ...(error ? { error } : {}) } };
    }
    case "search-set":
      return { ...state, search: event.search };
    case "rewind-set":
      return event.rewind
        ? { ...state, rewind: event.rewind, panel: undefined, search: undefined, tasksOpen: false }
        : { ...state, rewind: undefined };
    case "fold-toggle": {
      const unfolded = new Set(state.unfolded);
      if (!unfolded.delete(event.key)) unfolded.add(event.key);
      return { ...state, unfolded };
    }
    case "folds-shown":
      return sameRows(state.foldRows, event.rows) ? state : { ...state, foldRows: event.rows };
    case "tasks":
      return { ...state, tasks: event.tasks };
    case "tasks-open":
      return { ...state, tasksOpen: true, search: undefined, panel: undefined, rewind: undefined };
    case "tasks-close":
      return { ...state, tasksOpen: false };
    case "jump":
      return {
        ...state,
        search: undefined,
        scroll: 0,
        jump: { agentId: event.agentId, eventId: event.eventId },
      };
    case "jump-done":
      return { ...state, jump: undefined };
    case "deny-start":
      return { ...state, denying: event.id };
    case "deny-end":
      return { ...state, denying: undefined };
    case "mouse-toggle":
      return { ...state, mouseOn: !state.mouseOn };
    case "flash":
      return { ...state, flash: { text: event.text, until: event.until } };
    case "ctrl-c":
      return { ...state, lastCtrlC: event.at };
    case "outage":
      return { ...state, outage: { warning: event.warning, until: event.until } };
    case "outage-over":
      return { ...state, outage: undefined };
  }
}

function withPanel(state: ViewState, change: (panel: PanelState) => PanelState): ViewState {
  return state.panel ? { ...state, panel: change(state.panel) } : state;
}

function sameRows(a: readonly (number | undefined)[], b: readonly (number | undefined)[]) {
  return a.length === b.length && a.every((key, i) => key === b[i]);
}

/** The fold Enter on an empty input toggles: the lowest one on the screen. */
export function foldAtHand(state: ViewState): number | undefined {
  for (let i = state.foldRows.length - 1; i >= 0; i--) {
    if (state.foldRows[i] !== undefined) return state.foldRows[i];
  }
  return undefined;
}

/** The flash's text while it lasts. */
export function flashText(state: ViewState, now: number): string | undefined {
  return state.flash && state.flash.until > now ? state.flash.text : undefined;
}
