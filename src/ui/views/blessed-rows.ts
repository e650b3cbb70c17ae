// Draws our boxes into blessed's screen buffer row by row, skipping the rows a box drew last time
// with the same text and starting attribute. blessed's own render puts every cell of a box again
// (a regex and a substring per SGR sequence) whenever any of its text changed, and its setContent
// blanked the box first, so every row of the box was compared again with the terminal: with the
// agent panel open (114×34 cells) a key that moves the selection by one row paid for all of them.
// The cells written are the ones blessed's render writes (tests/ui compare the two buffers).
import { createRequire } from "node:module";
import type { Widgets } from "blessed";

type Cell = [number, string];
interface ScreenLine extends Array<Cell> {
  dirty?: boolean;
}

interface Coords {
  xi: number;
  xl: number;
  yi: number;
  yl: number;
  base: number;
}

interface RowScreen {
  lines: ScreenLine[];
  height: number;
  fullUnicode: boolean;
  attrCode(code: string, cur: number, def: number): number;
}

/** The parts of a blessed box this reads; anything it does not handle goes to blessed's render. */
export interface RowElement {
  screen: RowScreen;
  render(): unknown;
  hidden?: boolean;
  detached?: boolean;
  border?: unknown;
  tpadding?: unknown;
  valign?: string;
  scrollbar?: unknown;
  shrink?: boolean;
  _noFill?: boolean;
  ch: string;
  style: { transparent?: boolean };
  children: unknown[];
  lpos?: Coords;
  _clines?: string[] & { ci: number[]; attr: number[] };
  parseContent(): unknown;
  sattr(style: unknown): number;
  _getCoords(get?: boolean): Coords | undefined;
  _emit?(type: string, args?: unknown[]): unknown;
}

interface BlessedUnicode {
  codePointAt(str: string, i: number): number;
  combining: Record<number, boolean>;
}

export interface RowRender {
  /**
   * Starts a frame: no row has been written in it yet. With `full`, every box writes every row
   * (after a move, a resize or a redraw, when what the buffer holds is not what they drew).
   */
  begin(full: boolean): void;
}

/** What a box drew: per row of the box, the text, the attribute it started and ended with. */
interface Drawn {
  /** The geometry and defaults the rows were drawn with; anything else draws every row again. */
  where: string;
  lines: ScreenLine[] | undefined;
  text: (string | undefined)[];
  start: number[];
  end: number[];
}

/** A row's cells worked out once (see templateOf). */
interface Template {
  start: number;
  last: boolean;
  width: number;
  dattr: number;
  bch: string;
  /** Each cell's attribute and text (two flat arrays: kept long, so few objects). */
  attrs: Int32Array;
  chars: string[];
  /** The attribute after the row. */
  end: number;
}

/** Row templates per generation. */
const TEMPLATES = 256;

// eslint-disable-next-line no-control-regex -- the SGR sequences blessed's parsed content holds
const SGR = /\x1b\[[\d;]*m/y;
/** writeRow's answer for a row it cannot draw as blessed would (text wider than the box). */
const OVER = -1;

/**
 * Makes each of `elements` (boxes of `screen`, in blessed's drawing order) draw by rows. Call
 * begin() before each frame's renders.
 */
export function renderByRows(
  blessedScreen: Widgets.Screen,
  boxes: readonly Widgets.BoxElement[],
): RowRender {
  const screen = blessedScreen as unknown as RowScreen;
  const elements = boxes as unknown as readonly RowElement[];
  const require = createRequire(import.meta.url);
  const unicode = require("blessed/lib/unicode.js") as BlessedUnicode;
  /** Screen rows a box wrote in this frame: a box drawn after it must write its own again. */
  let written = new Uint8Array(0);
  let full = true;

  const mark = (y: number) => {
    if (y >= written.length) {
      const grown = new Uint8Array(Math.max(y + 1, screen.lines.length));
      grown.set(written);
      written = grown;
    }
    written[y] = 1;
  };

  /**
   * Puts `text` (one parsed line: SGR sequences, one code point per cell) into `line` from `xi`
   * to `xl` as blessed's render does, starting with `attr`; returns the attribute after it.
   */
  const writeRow = (
    line: ScreenLine,
    text: string,
    attr: number,
    dattr: number,
    bch: string,
    xi: number,
    xl: number,
    last: boolean,
  ): number => {
    let i = 0;
    let x = xi;
    const sgr = (): boolean => {
      SGR.lastIndex = i;
      const match = SGR.exec(text);
      if (!match) return false;
      i += match[0].length;
      attr = screen.attrCode(match[0], attr, dattr);
      return true;
    };
    for (; x < xl; x++) {
      const cell = line[x];
      if (!cell) break;
      while (text.charCodeAt(i) === 0x1b && sgr());
      if (i >= text.length) break;
      const code = text.charCodeAt(i);
      let ch = text[i++]!;
      if (ch === "\t") ch = bch;
      else if (ch === "\n") return OVER;
      // Printable ASCII is one cell, never a mark nor half of a pair.
      if (screen.fullUnicode && (code < 0x20 || code > 0x7e)) {
        const point = unicode.codePointAt(text, i - 1);
        if (unicode.combining[point]) {
          if (point > 0xffff) ch = text[i - 1]! + text[i++]!;
          // blessed puts it into the cell before; at the box's first column, the row above's.
          if (x - 1 < xi) return OVER;
          line[x - 1]![1] += ch;
          x--;
          continue;
        }
        if (point > 0xffff) ch = text[i - 1]! + text[i++]!;
      }
      if (attr !== cell[0] || ch !== cell[1]) {
        cell[0] = attr;
        cell[1] = ch;
        line.dirty = true;
      }
    }
    // The rest of the row: blank in the attribute the text ended with.
    for (; x < xl; x++) {
      const cell = line[x];
      if (!cell) break;
      if (attr !== cell[0] || bch !== cell[1]) {
        cell[0] = attr;
        cell[1] = bch;
        line.dirty = true;
      }
    }
    // What is left of the text once the row is full: attributes, and marks on its last cell,
    // which blessed reads at the start of the box's next row (so not after its last).
    while (!last && i < text.length) {
      if (text.charCodeAt(i) === 0x1b && sgr()) continue;
      const point = unicode.codePointAt(text, i);
      if (!screen.fullUnicode || !unicode.combining[point] || !line[xl - 1]) return OVER;
      const ch = point > 0xffff ? text[i]! + text[i + 1]! : text[i]!;
      i += ch.length;
      line[xl - 1]![1] += ch;
    }
    return attr;
  };

  /**
   * A row's cells by its text, starting attribute and place: a panel that scrolls by a row shows
   * last frame's rows one row up, so their cells are copied instead of worked out again (the SGR
   * sequences and code points). Two generations, so the ones in use stay and the rest go.
   */
  let templates = new Map<string, Template[]>();
  let older = new Map<string, Template[]>();
  /** The cells a template is worked out in (every one written: NaN equals no attribute). */
  const scratch: ScreenLine = [];

  const templateOf = (
    text: string,
    attr: number,
    dattr: number,
    bch: string,
    width: number,
    last: boolean,
  ): Template | undefined => {
    const fits = (t: Template) =>
      t.start === attr &&
      t.last === last &&
      t.width === width &&
      t.dattr === dattr &&
      t.bch === bch;
    let list = templates.get(text);
    let known = list?.find(fits);
    if (!known) {
      known = older.get(text)?.find(fits);
      if (!known) {
        while (scratch.length < width) scratch.push([NaN, ""]);
        for (let x = 0; x < width; x++) scratch[x]![0] = NaN;
        const end = writeRow(scratch, text, attr, dattr, bch, 0, width, last);
        if (end === OVER) return undefined;
        const attrs = new Int32Array(width);
        const chars: string[] = [];
        for (let x = 0; x < width; x++) {
          attrs[x] = scratch[x]![0];
          chars.push(scratch[x]![1]);
        }
        known = { start: attr, last, width, dattr, bch, attrs, chars, end };
      }
      if (templates.size >= TEMPLATES) {
        older = templates;
        templates = new Map();
        list = undefined;
      }
      templates.set(text, [...(list ?? []), known]);
    }
    return known;
  };

  /** Copies a template's cells into `line` from `xi`; returns the attribute after them. */
  const copyRow = (line: ScreenLine, template: Template, xi: number): number => {
    const { attrs, chars, width } = template;
    for (let k = 0; k < width; k++) {
      const cell = line[xi + k];
      if (!cell) break;
      const attr = attrs[k]!;
      const ch = chars[k]!;
      if (attr !== cell[0] || ch !== cell[1]) {
        cell[0] = attr;
        cell[1] = ch;
        line.dirty = true;
      }
    }
    return template.end;
  };

  const install = (el: RowElement) => {
    const blessedRender = el.render.bind(el);
    const drawn: Drawn = { where: "", lines: undefined, text: [], start: [], end: [] };
    /** blessed's render, after which none of the box's rows is known to hold what it drew. */
    const whole = () => {
      drawn.where = "";
      const coords = blessedRender() as Coords | undefined;
      if (coords) for (let y = Math.max(0, coords.yi); y < coords.yl; y++) mark(y);
      return coords;
    };
    // Patch: Element.prototype.render (blessed/lib/widgets/element.js), per box: changed rows only.
    el.render = function renderRows(this: RowElement) {
      if (
        el.border ||
        el.tpadding ||
        (el.valign && el.valign !== "top") ||
        el.scrollbar ||
        el.shrink ||
        el._noFill ||
        el.style.transparent ||
        el.children.length > 0
      ) {
        return whole();
      }
      el._emit?.("prerender");
      el.parseContent();
      const coords = el._getCoords(true);
      if (!coords) {
        delete el.lpos;
        return undefined;
      }
      if (coords.xl - coords.xi <= 0) {
        coords.xl = Math.max(coords.xl, coords.xi);
        return undefined;
      }
      if (coords.yl - coords.yi <= 0) {
        coords.yl = Math.max(coords.yl, coords.yi);
        return undefined;
      }
      const clines = el._clines;
      if (!clines || coords.xi < 0 || coords.yi < 0 || coords.base >= clines.ci.length) {
        return whole();
      }
      el.lpos = coords;
      const { xi, xl, yi, yl, base } = coords;
      const dattr = el.sattr(el.style);
      const bch = el.ch;
      const lines = screen.lines;
      const where = `${xi} ${xl} ${yi} ${yl} ${base} ${dattr} ${bch}`;
      const again = full || drawn.where !== where || drawn.lines !== lines;
      if (again) {
        drawn.text = [];
        drawn.start = [];
        drawn.end = [];
      }
      drawn.where = where;
      drawn.lines = lines;
      // blessed starts with the box's attribute, or the first shown line's when scrolled.
      let attr = clines.ci[base]! > 0 ? clines.attr[Math.min(base, clines.length - 1)]! : dattr;
      for (let y = yi, r = base; y < yl; y++, r++) {
        const line = lines[y];
        if (!line) break;
        const text = r < clines.length ? clines[r]! : "";
        const row = y - yi;
        if (!again && written[y] !== 1 && drawn.text[row] === text && drawn.start[row] === attr) {
          attr = drawn.end[row]!;
          continue;
        }
        const template = templateOf(text, attr, dattr, bch, xl - xi, y === yl - 1);
        if (!template || xl > line.length) return whole();
        const end = copyRow(line, template, xi);
        drawn.text[row] = text;
        drawn.start[row] = attr;
        drawn.end[row] = end;
        mark(y);
        attr = end;
      }
      el._emit?.("render", [coords]);
      return coords;
    };
  };

  for (const el of elements) install(el);
  return {
    begin(everything) {
      full = everything;
      written.fill(0);
    },
  };
}
