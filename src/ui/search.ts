// The TUI's search: the result list's state and its keys, as pure functions (the app runs the
// query and the jump), and where to scroll so that a jumped-to event is in view.
import type { SearchHit } from "../search/search.js";
import type { KeyEvent } from "./keys.js";
import type { ScrollEntry } from "./views/entry-lines.js";

/** The key that opens the search prompt (`/search ` in the input). */
export const SEARCH_KEY = "Ctrl+F";

export interface SearchState {
  query: string;
  /** Undefined while the query runs. */
  hits: SearchHit[] | undefined;
  selected: number;
  /** Why the query failed (the database away), shown in the list. */
  error?: string;
}

export type SearchAction = { type: "none" } | { type: "close" } | { type: "jump"; hit: SearchHit };

export function openSearch(query: string): SearchState {
  return { query, hits: undefined, selected: 0 };
}

/** A key while the result list is open: ↑↓ PageUp/PageDown select, Enter jumps, Esc closes. */
export function searchKey(
  state: SearchState,
  event: KeyEvent,
  page: number,
): { state: SearchState; action: SearchAction } {
  const none = (next: SearchState = state) => ({ state: next, action: { type: "none" } as const });
  if (event.type !== "key") return none();
  const count = state.hits?.length ?? 0;
  const select = (at: number) => none({ ...state, selected: Math.max(0, Math.min(count - 1, at)) });
  const { name, ctrl } = event;
  if (name === "escape" || (ctrl && (name === "c" || name === "f"))) {
    return { state, action: { type: "close" } };
  }
  if (name === "up") return select(state.selected - 1);
  if (name === "down") return select(state.selected + 1);
  if (name === "pageup") return select(state.selected - Math.max(1, page));
  if (name === "pagedown") return select(state.selected + Math.max(1, page));
  if (name === "home") return select(0);
  if (name === "end") return select(count - 1);
  if (name === "enter") {
    const hit = state.hits?.[state.selected];
    return hit ? { state, action: { type: "jump", hit } } : none();
  }
  return none();
}

/**
 * The `scrollFromBottom` that shows the event `eventId` a third of the way down a window of
 * `rows` lines (its top, when it is taller than the window); undefined when it is not loaded.
 */
export function scrollToEvent(
  entries: readonly ScrollEntry[],
  eventId: number,
  lineCount: (entry: ScrollEntry) => number,
  rows: number,
): number | undefined {
  const at = indexOfEvent(entries, eventId);
  if (at < 0) return undefined;
  const below = linesAfter(entries, at, lineCount);
  const own = lineCount(entries[at]!);
  return Math.max(0, below + own - rows + Math.floor(rows / 3));
}

/**
 * Lines below the event `eventId` (0 when it is not loaded): a page of newer history loaded under
 * a window scrolled to it pushes the window up by as much, so it stays put.
 */
export function linesBelowEvent(
  entries: readonly ScrollEntry[],
  eventId: number,
  lineCount: (entry: ScrollEntry) => number,
): number {
  const at = indexOfEvent(entries, eventId);
  return at < 0 ? 0 : linesAfter(entries, at, lineCount);
}

/** The newest loaded event's id, if any. */
export function lastEventId(entries: readonly ScrollEntry[]): number | undefined {
  let newest: number | undefined;
  // A call's group may hold a newer event (its result) than the entries after it.
  for (let i = entries.length - 1; i >= 0 && newest === undefined; i--) {
    const entry = entries[i]!;
    if (entry.kind === "event") newest = entry.event.id;
    else if (entry.kind === "call") newest = entry.result?.id ?? entry.call.id;
  }
  return newest;
}

function indexOfEvent(entries: readonly ScrollEntry[], eventId: number): number {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.kind === "event" && entry.event.id === eventId) return i;
    // A result is drawn in its call's group.
    if (entry.kind === "call" && (entry.call.id === eventId || entry.result?.id === eventId))
      return i;
  }
  return -1;
}

/** As the scrollback lays them out: each entry's lines, and one blank line between entries. */
function linesAfter(
  entries: readonly ScrollEntry[],
  at: number,
  lineCount: (entry: ScrollEntry) => number,
): number {
  let below = 0;
  for (let i = entries.length - 1; i > at; i--) {
    const n = lineCount(entries[i]!);
    if (n > 0) below += n + 1;
  }
  return below;
}
