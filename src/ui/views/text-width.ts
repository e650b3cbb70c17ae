// Display width of terminal text, per grapheme: East Asian wide/fullwidth characters and emoji take
// two columns, combining marks and joiners none. Wrapping and truncation here never exceed a width.
// East Asian widths come from get-east-asian-width. Zero width is Unicode's own properties (marks,
// joiners, selectors, modifiers, tags) through the regex engine, so it follows Unicode with Node;
// string-width is not used because it measures a whole string, and blessed needs an answer per code
// point (blessed-widths.ts) that the wrapping here must match cell for cell.
import { eastAsianWidth } from "get-east-asian-width";

const ASCII_PRINTABLE = /^[\x20-\x7e]*$/;
const EMOJI_PRESENTATION = /\p{Emoji_Presentation}/u;
/** Code points drawn in no column of their own: marks, joiners, selectors, emoji modifiers, tags. */
const ZERO_WIDTH_CLASS =
  "[\\p{Mn}\\p{Me}\\u200b-\\u200f\\u2060-\\u2064\\ufeff\\ufe00-\\ufe0f\\u{1f3fb}-\\u{1f3ff}\\u{e0000}-\\u{e0fff}]";
// eslint-disable-next-line no-misleading-character-class -- single code points are tested, on purpose
const ZERO_WIDTH = new RegExp(`^${ZERO_WIDTH_CLASS}$`, "u");

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * East Asian Wide (W) and Fullwidth (F), as terminals draw them (two columns); ambiguous ones are
 * narrow. The table is get-east-asian-width's, which follows each Unicode release.
 */
export function isWideCodePoint(cp: number): boolean {
  return cp >= 0x1100 && eastAsianWidth(cp) === 2;
}

/**
 * Columns one code point takes: 0 for marks, joiners, variation selectors and emoji modifiers
 * (they join the character before), 2 for wide characters and emoji, else 1. blessed is taught
 * the same table (see blessed-widths.ts), so what is wrapped here is what blessed lays out.
 */
export function codePointWidth(cp: number): number {
  if (cp >= 0x20 && cp < 0x7f) return 1;
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (cp >= MEMO_END) return measureCodePoint(cp);
  const known = widthMemo[cp]!;
  if (known !== UNKNOWN) return known;
  return (widthMemo[cp] = measureCodePoint(cp));
}

function measureCodePoint(cp: number): number {
  if (isZeroWidth(cp)) return 0;
  if (isWideCodePoint(cp) || EMOJI_PRESENTATION.test(String.fromCodePoint(cp))) return 2;
  return 1;
}

export function isZeroWidth(cp: number): boolean {
  if (cp < 0x300 || cp > 0x10ffff) return false;
  if (cp >= MEMO_END) return ZERO_WIDTH.test(String.fromCodePoint(cp));
  const known = zeroWidthMemo[cp]!;
  if (known !== UNKNOWN) return known === 1;
  const zero = ZERO_WIDTH.test(String.fromCodePoint(cp));
  zeroWidthMemo[cp] = zero ? 1 : 0;
  return zero;
}

/**
 * Answers kept per code point below MEMO_END (the BMP and the emoji plane: 128 KiB each): blessed
 * asks for every cell of every frame, and a property regex per character costs microseconds.
 */
const MEMO_END = 0x20000;
const UNKNOWN = -1;
const widthMemo = new Int8Array(MEMO_END).fill(UNKNOWN);
const zeroWidthMemo = new Int8Array(MEMO_END).fill(UNKNOWN);

/** Columns one grapheme cluster takes: the sum over its code points. */
export function graphemeWidth(grapheme: string): number {
  if (grapheme.length === 1) return codePointWidth(grapheme.charCodeAt(0));
  let width = 0;
  for (const ch of grapheme) width += codePointWidth(ch.codePointAt(0)!);
  return width;
}

export function graphemes(text: string): string[] {
  if (ASCII_PRINTABLE.test(text)) return text.split("");
  return Array.from(segmenter.segment(text), (s) => s.segment);
}

/**
 * Widths of short non-ASCII strings already measured: the same glyphs, names and labels come back
 * every frame, and segmenting graphemes costs microseconds a string. Emptied when full.
 */
const measured = new Map<string, number>();
const MEASURED_MAX_LENGTH = 64;
const MEASURED_MAX_ENTRIES = 4096;

/** Columns `text` (one line, no tags) takes on a terminal. */
export function displayWidth(text: string): number {
  if (ASCII_PRINTABLE.test(text)) return text.length;
  const short = text.length <= MEASURED_MAX_LENGTH;
  const known = short ? measured.get(text) : undefined;
  if (known !== undefined) return known;
  let width = 0;
  for (const { segment } of segmenter.segment(text)) width += graphemeWidth(segment);
  if (short) {
    if (measured.size >= MEASURED_MAX_ENTRIES) measured.clear();
    measured.set(text, width);
  }
  return width;
}

/** At most `width` columns of `text`; cut text ends with `…`. */
export function truncateToWidth(text: string, width: number, ellipsis = "…"): string {
  if (width <= 0) return "";
  if (displayWidth(text) <= width) return text;
  const room = width - displayWidth(ellipsis);
  if (room < 0) return sliceToWidth(text, width);
  return sliceToWidth(text, room) + ellipsis;
}

/** The longest prefix of `text` that fits in `width` columns (never splits a grapheme). */
export function sliceToWidth(text: string, width: number): string {
  if (ASCII_PRINTABLE.test(text)) return text.slice(0, Math.max(0, width));
  let out = "";
  let used = 0;
  for (const g of graphemes(text)) {
    const w = graphemeWidth(g);
    if (used + w > width) break;
    out += g;
    used += w;
  }
  return out;
}

/** Pads with spaces (or `fill`) to exactly `width` columns; longer text is truncated. */
export function padToWidth(text: string, width: number, fill = " "): string {
  const cut = truncateToWidth(text, width);
  return cut + fill.repeat(Math.max(0, width - displayWidth(cut)));
}

/**
 * Word-wraps one line (no newlines) to rows of at most `width` columns. Breaks at spaces when it
 * can, inside a word when it must; spaces at a break are dropped, leading indentation is kept.
 */
export function wrapLine(text: string, width: number): string[] {
  const w = Math.max(1, width);
  if (displayWidth(text) <= w) return [text];
  const rows: string[] = [];
  let row = "";
  let used = 0;
  const flush = (): void => {
    rows.push(row.trimEnd());
    row = "";
    used = 0;
  };
  for (const token of text.split(/(\s+)/)) {
    if (!token) continue;
    const tw = displayWidth(token);
    if (/^\s+$/.test(token)) {
      if (used + tw <= w) {
        row += token;
        used += tw;
      } else if (used > 0) {
        flush();
      }
      continue;
    }
    if (used + tw <= w) {
      row += token;
      used += tw;
      continue;
    }
    if (used > 0 && tw <= w) {
      flush();
      row = token;
      used = tw;
      continue;
    }
    for (const g of graphemes(token)) {
      let gw = graphemeWidth(g);
      let cell = g;
      if (gw > w) [cell, gw] = ["…", 1]; // a wide character in a one-column row
      if (used + gw > w) flush();
      row += cell;
      used += gw;
    }
  }
  if (row || rows.length === 0) rows.push(row.trimEnd());
  return rows;
}

/** Wraps multi-line text: each source line wrapped on its own (an empty line stays one row). */
export function wrapText(text: string, width: number): string[] {
  return text.split("\n").flatMap((line) => wrapLine(line, width));
}
