// Keeping the scrollback still while scrolled up: the newest entry at one frame is the anchor, and
// the lines added below it by the next frame push the window up by as much. Entries are measured
// by `lines` (the scrollback view's cached layouts: a frame must not wrap a long entry again).
import { entryKey, type ScrollEntry } from "./views/index.js";

/** How many lines an entry takes at the width being painted. */
export type LineCount = (entry: ScrollEntry) => number;

/** The newest entry at the last paint and how many lines it took. */
export interface Anchor {
  key: string;
  lines: number;
}

export function bottomAnchor(
  entries: readonly ScrollEntry[],
  lines: LineCount,
): Anchor | undefined {
  const last = entries.at(-1);
  return last && { key: entryKey(last), lines: lines(last) };
}

/** Lines added below `anchor` since it was taken (new entries, or the anchor entry growing). */
export function grownBelow(
  anchor: Anchor | undefined,
  entries: readonly ScrollEntry[],
  lines: LineCount,
): number {
  if (!anchor) return 0;
  let at = entries.length - 1;
  // Only the last few entries can be new between two frames; look no further back than that.
  const stop = Math.max(0, entries.length - 50);
  while (at >= stop && entryKey(entries[at]!) !== anchor.key) at--;
  if (at < stop) return 0;
  let added = lines(entries[at]!) - anchor.lines;
  // Each newer entry: its lines and the blank line that separates entries.
  for (let i = at + 1; i < entries.length; i++) {
    added += lines(entries[i]!) + 1;
  }
  return Math.max(0, added);
}
