// The scrollback as a virtual list: only the entries from the bottom up to the visible window are
// laid out, and their lines are cached per (entry, width) in a bounded LRU, so a frame costs the
// window, not the history; a growing stream is wrapped on from where its last layout stopped.
import { renderEntry, renderStream, type ScrollEntry, type StreamProgress } from "./entry-lines.js";
import type { AgentNames, AgentOrder } from "./tools/index.js";
import type { Line, Theme } from "./theme.js";

export interface ScrollbackRender {
  /** At most `height` lines, oldest first; fewer when the history is shorter than the window. */
  lines: Line[];
  /**
   * The largest useful `scrollFromBottom`. Exact once every entry has been laid out; before that
   * it is one line past what has been laid out (older entries exist, of unknown height), so
   * scrolling up stays possible and the bound grows as you go.
   */
  maxScroll: number;
  /** The first line of the oldest entry given is visible: time to page older history in. */
  atTop: boolean;
  /** Per line of `lines`: the index (in the entries given) of the entry it shows; -1: a blank between two. */
  owners: number[];
}

export interface ScrollbackView {
  /** `scrollFromBottom` = lines scrolled up from the newest line (0 = following the bottom). */
  render(
    entries: readonly ScrollEntry[],
    width: number,
    height: number,
    scrollFromBottom: number,
  ): ScrollbackRender;
  /** One entry's lines at `width`, from the cache when laid out before. */
  lines(entry: ScrollEntry, width: number): Line[];
  /** Drops cached lines of one event (its row changed), or of everything. */
  forget(eventId?: number): void;
  /** How many layouts are cached (for tests and benchmarks). */
  readonly cacheSize: number;
}

export interface ScrollbackOptions {
  /** Cached layouts kept (default 2000). */
  cacheSize?: number;
  /** Called each time an entry is actually laid out (a cache miss); for tests and benchmarks. */
  onLayout?: (key: string, width: number) => void;
  /**
   * The names of the tree's agents, for tool lines that refer to them by id. A cached layout keeps
   * the names it was made with: call forget() when an agent becomes known.
   */
  names?: AgentNames;
  /** The tree's fork order of agents by id (a fan-in's rows follow it); read like `names`. */
  order?: AgentOrder;
}

interface Cached {
  /** The text the layout was made from, for entries whose text changes under one key. */
  source: string;
  lines: Line[];
  /** A stream's wrapping so far: its next layout goes on from there. */
  progress?: StreamProgress;
}

export function createScrollbackView(
  theme: Theme,
  options: ScrollbackOptions = {},
): ScrollbackView {
  const limit = Math.max(16, options.cacheSize ?? 2000);
  // A Map iterates in insertion order: re-inserting on use makes its first key the least recent.
  const cache = new Map<string, Cached>();

  const layout = (entry: ScrollEntry, width: number): Line[] => {
    const key = `${entryKey(entry)}@${width}`;
    const source = entrySource(entry);
    const hit = cache.get(key);
    if (hit && hit.source === source) {
      cache.delete(key);
      cache.set(key, hit);
      return hit.lines;
    }
    options.onLayout?.(entryKey(entry), width);
    const laid: Cached =
      entry.kind === "stream"
        ? { source, ...renderStream(entry, width, theme, hit?.progress) }
        : { source, lines: renderEntry(entry, width, theme, options.names, options.order) };
    cache.delete(key);
    cache.set(key, laid);
    while (cache.size > limit) cache.delete(cache.keys().next().value!);
    return laid.lines;
  };

  return {
    render(entries, width, height, scrollFromBottom) {
      const rows = Math.max(0, height);
      const want = Math.max(0, Math.floor(scrollFromBottom)) + rows;
      // Lines from the bottom up, newest entry first; each entry's lines are kept in order.
      const chunks: { at: number; lines: Line[]; blank: boolean }[] = [];
      let count = 0;
      let i = entries.length - 1;
      for (; i >= 0 && count < want; i--) {
        const lines = layout(entries[i]!, width);
        if (lines.length === 0) continue;
        const blank = count > 0;
        chunks.push({ at: i, lines, blank });
        count += lines.length + (blank ? 1 : 0);
      }
      const complete = i < 0;
      const maxScroll = Math.max(0, count - rows + (complete ? 0 : 1));
      const scroll = Math.min(Math.max(0, Math.floor(scrollFromBottom)), maxScroll);
      const all: Line[] = [];
      const allOwners: number[] = [];
      for (let c = chunks.length - 1; c >= 0; c--) {
        const chunk = chunks[c]!;
        all.push(...chunk.lines);
        for (let n = 0; n < chunk.lines.length; n++) allOwners.push(chunk.at);
        if (chunk.blank) {
          all.push("");
          allOwners.push(-1);
        }
      }
      const end = all.length - scroll;
      const begin = Math.max(0, end - rows);
      return {
        lines: all.slice(begin, end),
        maxScroll,
        atTop: complete && begin === 0,
        owners: allOwners.slice(begin, end),
      };
    },
    lines: layout,
    forget(eventId) {
      if (eventId === undefined) {
        cache.clear();
        return;
      }
      const prefix = `e${eventId}@`;
      for (const key of [...cache.keys()]) if (key.startsWith(prefix)) cache.delete(key);
    },
    get cacheSize() {
      return cache.size;
    },
  };
}

/** Identity of an entry across renders. A stream keeps its key while its text grows. */
export function entryKey(entry: ScrollEntry): string {
  switch (entry.kind) {
    case "event":
      return `e${entry.event.id}`;
    case "call":
      // The call's event: a search hit or a jump to it finds the group.
      return `e${entry.call.id}`;
    case "stream":
      return `s${entry.agentId}`;
    case "notice":
      return `n${entry.id}`;
    case "pending":
      return `p${entry.id}`;
    case "rewound":
      return `r${entry.first}`;
  }
}

/**
 * What a cached layout depends on besides key and width. An event row changes only when a rewind
 * marks it (it is then drawn dim).
 */
function entrySource(entry: ScrollEntry): string {
  switch (entry.kind) {
    case "event":
      return entry.event.rewound_at ? "r" : "";
    case "call":
      // Its result arriving, or the spinner turning while it runs, lays it out again.
      return `${entry.result?.id ?? ""}:${entry.spinner ?? ""}${entry.call.rewound_at ? ":r" : ""}`;
    case "stream":
      return `${entry.reasoning.length}:${entry.reasoning}\u0000${entry.text}`;
    case "notice":
    case "pending":
      return entry.text;
    case "rewound":
      return `${entry.count}:${entry.open}:${entry.at.getTime()}`;
  }
}
