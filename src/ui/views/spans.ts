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
  const wrapper = createWrapper(width, indent);
  for (const span of spans) wrapper.add(span);
  return wrapper.rows();
}

/**
 * wrapSpans taken one span at a time. Rows already broken never change, so a copy taken part way
 * can go on with different text: text that only grows (a streaming answer) is wrapped once.
 */
export interface Wrapper {
  add(span: Span): void;
  /** The rows of everything added so far (as wrapSpans returns them). */
  rows(): Row[];
  /** Rows broken so far: final whatever is added next. */
  readonly done: number;
  /** An independent wrapper in the same state. */
  copy(): Wrapper;
}

export function createWrapper(width: number, indent = 0): Wrapper {
  const w = Math.max(1, width);
  return new SpanWrapper(w, indent < w ? indent : 0);
}

class SpanWrapper implements Wrapper {
  private broken: Row[] = [];
  private row: Row = [];
  private used = 0;
  private start = 0;

  constructor(
    private readonly w: number,
    private readonly pad: number,
  ) {}

  get done(): number {
    return this.broken.length;
  }

  add(span: Span): void {
    const { w, pad } = this;
    for (const part of span.text.split(/(\n|[^\S\n]+)/)) {
      if (!part) continue;
      if (part === "\n") {
        this.newRow();
        continue;
      }
      const pw = displayWidth(part);
      if (/^\s+$/.test(part)) {
        if (this.used + pw <= w) this.put(part, span.style, pw);
        else if (this.used > this.start) this.newRow();
        continue;
      }
      if (this.used + pw <= w) {
        this.put(part, span.style, pw);
        continue;
      }
      if (this.used > this.start && pw <= w - pad) {
        this.newRow();
        this.put(part, span.style, pw);
        continue;
      }
      for (const g of graphemes(part)) {
        let gw = graphemeWidth(g);
        let cell = g;
        if (this.start + gw > w) [cell, gw] = ["…", 1]; // a wide character in a one-column row
        if (this.used + gw > w) this.newRow();
        this.put(cell, span.style, gw);
      }
    }
  }

  rows(): Row[] {
    return [...this.broken, trimRowEnd(copyRow(this.row))];
  }

  copy(): Wrapper {
    const twin = new SpanWrapper(this.w, this.pad);
    twin.broken = [...this.broken];
    twin.row = copyRow(this.row);
    twin.used = this.used;
    twin.start = this.start;
    return twin;
  }

  private put(text: string, style: Style | undefined, cols: number): void {
    const last = this.row[this.row.length - 1];
    if (last && last.style === style) last.text += text;
    else this.row.push({ text, style });
    this.used += cols;
  }

  private newRow(): void {
    this.broken.push(trimRowEnd(this.row));
    this.row = this.pad ? [{ text: " ".repeat(this.pad) }] : [];
    this.used = this.pad;
    this.start = this.pad;
  }
}

/** Spans are merged into in place while their row is open: a copy must not share them. */
function copyRow(row: Row): Row {
  return row.map((span) => ({ ...span }));
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
