// Keeping the scrollback still while scrolled up: the newest entry at one frame is the anchor, and
// the lines added below it by the next frame push the window up by as much.
import { entryKey, renderEntry, type ScrollEntry, type Theme } from "./views/index.js";

/** The newest entry at the last paint and how many lines it took. */
export interface Anchor {
  key: string;
  lines: number;
}

export function bottomAnchor(
  entries: readonly ScrollEntry[],
  width: number,
  theme: Theme,
): Anchor | undefined {
  const last = entries.at(-1);
  return last && { key: entryKey(last), lines: renderEntry(last, width, theme).length };
}

/** Lines added below `anchor` since it was taken (new entries, or the anchor entry growing). */
export function grownBelow(
  anchor: Anchor | undefined,
  entries: readonly ScrollEntry[],
  width: number,
  theme: Theme,
): number {
  if (!anchor) return 0;
  let at = entries.length - 1;
  // Only the last few entries can be new between two frames; look no further back than that.
  const stop = Math.max(0, entries.length - 50);
  while (at >= stop && entryKey(entries[at]!) !== anchor.key) at--;
  if (at < stop) return 0;
  let added = renderEntry(entries[at]!, width, theme).length - anchor.lines;
  // Each newer entry: its lines and the blank line that separates entries.
  for (let i = at + 1; i < entries.length; i++) {
    added += renderEntry(entries[i]!, width, theme).length + 1;
  }
  return Math.max(0, added);
}
