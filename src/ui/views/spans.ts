// Word-wrapping of styled spans into rows of at most `width` columns, with a continuation indent;
// and collapsing of long text to a few rows with "… K more lines".
import { displayWidth, graphemeWidth, graphemes, sliceToWidth } from "./text-width.js";
import { paintSpans, type Line, type Span, type Style, type Theme } from "./theme.js";

export type Row = Span[];

/**
 * Wraps spans to rows: the first row may use all `width` columns, later rows start with `indent`
 * spaces. "\n" in a span starts a new row. Breaks at spaces when possible (the spaces at a break
 * are dropped), inside a word when the word alone is wider than a row.
 */
export function wrapSpans(spans: readonly Span[], width: number, indent = 0): Row[] {
  const w = Math.max(1, width);
  const pad = indent < w ? indent : 0;
  const rows: Row[] = [];
  let row: Row = [];
  let used = 0;
  let start = 0;
  const add = (text: string, style: Style | undefined, cols: number): void => {
    const last = row[row.length - 1];
    if (last && last.style === style) last.text += text;
    else row.push({ text, style });
    used += cols;
  };
  const newRow = (): void => {
    rows.push(trimRowEnd(row));
    row = pad ? [{ text: " ".repeat(pad) }] : [];
    used = pad;
    start = pad;
  };
  for (const span of spans) {
    for (const part of span.text.split(/(\n|[^\S\n]+)/)) {
      if (!part) continue;
      if (part === "\n") {
        newRow();
        continue;
      }
      const pw = displayWidth(part);
      if (/^\s+$/.test(part)) {
        if (used + pw <= w) add(part, span.style, pw);
        else if (used > start) newRow();
        continue;
      }
      if (used + pw <= w) {
        add(part, span.style, pw);
        continue;
      }
      if (used > start && pw <= w - pad) {
        newRow();
        add(part, span.style, pw);
        continue;
      }
      for (const g of graphemes(part)) {
        let gw = graphemeWidth(g);
        let cell = g;
        if (start + gw > w) [cell, gw] = ["…", 1]; // a wide character in a one-column row
        if (used + gw > w) newRow();
        add(cell, span.style, gw);
      }
    }
  }
  rows.push(trimRowEnd(row));
  return rows;
}

function trimRowEnd(row: Row): Row {
  while (row.length > 0) {
    const last = row[row.length - 1]!;
    const trimmed = last.text.trimEnd();
    if (trimmed) {
      last.text = trimmed;
      break;
    }
    row.pop();
  }
  return row;
}

export function paintRows(theme: Theme, rows: readonly Row[]): Line[] {
  return rows.map((row) => paintSpans(theme, row));
}

export interface Collapsed {
  rows: Row[];
  /** Source lines not (fully) shown. */
  hidden: number;
}

/**
 * Lays out `head` (glyph/label spans) followed by `body`, keeping at most `maxRows` rows. Only the
 * first lines of the body are wrapped (each cut to what could be shown), so a megabyte of tool
 * output costs no more than a screenful.
 */
export function collapseSpans(
  head: readonly Span[],
  body: string,
  style: Style | undefined,
  width: number,
  indent: number,
  maxRows: number,
): Collapsed {
  const lines = body.split("\n");
  const cap = Math.max(1, maxRows) * Math.max(1, width);
  let rows: Row[] = [];
  let shown = 0;
  for (let i = 0; i < lines.length && rows.length < maxRows; i++) {
    const text = lines[i]!.length > cap ? lines[i]!.slice(0, cap) : lines[i]!;
    // Later source lines start at the continuation indent, like the wrapped rows.
    const lead: Span[] = i === 0 ? [...head] : [{ text: " ".repeat(indent) }];
    const lineRows = wrapSpans([...lead, { text, style }], width, indent);
    const room = maxRows - rows.length;
    if (lineRows.length > room || text !== lines[i]) {
      rows = rows.concat(lineRows.slice(0, room));
      break;
    }
    rows = rows.concat(lineRows);
    shown++;
  }
  return { rows, hidden: lines.length - shown };
}

export function rowWidth(row: Row): number {
  return row.reduce((n, span) => n + displayWidth(span.text), 0);
}

/** The row cut so that `suffix` fits after it within `width` columns, then the suffix. */
export function endRowWith(row: Row, suffix: Span, width: number): Row {
  const out = row.map((span) => ({ ...span }));
  const room = width - displayWidth(suffix.text);
  while (out.length > 0 && rowWidth(out) > room) {
    const last = out[out.length - 1]!;
    const keep = room - (rowWidth(out) - displayWidth(last.text));
    if (keep > 0) last.text = sliceToWidth(last.text, keep);
    else out.pop();
  }
  return [...out, suffix];
}

/** The row as is when it fits in `width` columns, else cut with "…". */
export function clipRow(row: Row, width: number): Row {
  if (width <= 0) return [];
  if (rowWidth(row) <= width) return row;
  return endRowWith(row, { text: "…", style: row[row.length - 1]?.style }, width);
}
