// Teaches blessed the column widths the views wrap with (text-width.ts): blessed's own table
// predates emoji, so it would lay 😀 out in one cell while terminals draw two, shifting the rest of
// the row; and its `wrap: false` cut counts UTF-16 code units, not cells. Call
// installTerminalWidths() once, before creating a screen.
import { createRequire } from "node:module";
import { codePointWidth, isZeroWidth } from "./text-width.js";

interface BlessedUnicode {
  charWidth(str: string | number, i?: number): number;
  codePointAt(str: string, i: number): number;
  combining: Record<number, boolean>;
  chars: { all: WideCharPattern };
}

interface ElementThis {
  wrap?: boolean;
  scrollbar?: unknown;
  type?: string;
}

interface ElementProto {
  _wrapContent(this: ElementThis, content: string, width: number): unknown;
}

let installed = false;

export function installTerminalWidths(): void {
  if (installed) return;
  installed = true;
  const require = createRequire(import.meta.url);
  const unicode = require("blessed/lib/unicode.js") as BlessedUnicode;
  const original = unicode.charWidth.bind(unicode);
  // Patch: unicode.charWidth (blessed/lib/unicode.js), Screen.prototype.draw's: emoji are 2, not 1.
  unicode.charWidth = (str, i) => {
    const cp = typeof str === "number" ? str : unicode.codePointAt(str, i ?? 0);
    if (cp === 0x09 || typeof cp !== "number" || Number.isNaN(cp)) return original(str, i);
    return codePointWidth(cp);
  };
  // Patch: unicode.combining (blessed/lib/unicode.js), Element.prototype.render's: skin tones too.
  // blessed puts a code point it finds here into the cell of the character before it.
  unicode.combining = zeroWidthTable();
  // Patch: unicode.chars.all (blessed/lib/unicode.js), Element.prototype.parseContent's: emoji.
  // blessed follows every match with a spare cell ("$1\x03"), so a wide character's second
  // column is never given to the next character.
  unicode.chars.all = wideCharPattern();
  // Patch: Element.prototype._wrapContent (blessed/lib/widgets/element.js): no-wrap cut by cells.
  // blessed's cut counts UTF-16 code units, not cells: a row holding an emoji or a combining mark
  // would lose its last cells.
  const element = require("blessed/lib/widgets/element.js") as { prototype: ElementProto };
  const wrapContent = element.prototype._wrapContent;
  element.prototype._wrapContent = function (content, width) {
    if (this.wrap !== false || typeof content !== "string")
      return wrapContent.call(this, content, width);
    const margin = (this.scrollbar ? 1 : 0) + (this.type === "textarea" ? 1 : 0);
    const cells = width > margin ? width - margin : width;
    const cut = content
      .split("\n")
      .map((line) => cutToCells(line, cells, isZeroWidth))
      .join("\n");
    return wrapContent.call(this, cut, Number.MAX_SAFE_INTEGER);
  };
}

/**
 * `table[cp]` is true for a code point isZeroWidth() counts, as blessed reads its `combining` for
 * every cell it draws. A code point's first look-up asks isZeroWidth (through the prototype, a
 * Proxy); the answer becomes an own property, so later frames read a plain object, no regex.
 */
export function zeroWidthTable(): Record<number, boolean> {
  const table = Object.create(
    new Proxy(Object.create(null) as Record<string, boolean>, {
      get(_target, key, receiver: Record<string, boolean>) {
        if (typeof key !== "string") return undefined;
        const cp = Number(key);
        if (!Number.isInteger(cp) || cp < 0) return undefined;
        const zero = isZeroWidth(cp);
        Object.defineProperty(receiver, key, { value: zero, enumerable: true });
        return zero;
      },
    }),
  ) as Record<number, boolean>;
  return table;
}

/**
 * The first `cells` cells of a line of parsed content, as blessed's renderer lays it out: one cell
 * per code point ("\x03", a wide character's spare cell, included), none for a combining one or
 * an SGR sequence. SGR sequences past the cut are kept, so attributes still close.
 */
export function cutToCells(
  line: string,
  cells: number,
  isCombining: (cp: number) => boolean,
): string {
  let used = 0;
  let i = 0;
  while (i < line.length) {
    if (line[i] === "\x1b") {
      // eslint-disable-next-line no-control-regex -- SGR sequences are what blessed's content holds
      const sgr = /^\x1b\[[\d;]*m/.exec(line.slice(i, i + 32));
      if (sgr) {
        i += sgr[0].length;
        continue;
      }
    }
    const cp = line.codePointAt(i)!;
    const size = cp > 0xffff ? 2 : 1;
    if (!isCombining(cp)) {
      if (used === cells) break;
      used++;
    }
    i += size;
  }
  if (i >= line.length) return line;
  // eslint-disable-next-line no-control-regex -- as above
  const rest = line.slice(i).match(/\x1b\[[\d;]*m/g);
  return line.slice(0, i) + (rest ? rest.join("") : "");
}

/**
 * What blessed does with `unicode.chars.all`: `content.replace(chars.all, "$1\x03")` (or "??").
 * A string's replace() hands the work to an object's Symbol.replace, so this is one: each code
 * point codePointWidth() counts as two columns, with the zero-width ones that follow it (an emoji's
 * skin tone, a variation selector), is `$1` in the replacement. No table of ranges is copied into
 * a regex: the widths are text-width.ts's, asked per code point.
 */
export interface WideCharPattern {
  [Symbol.replace](text: string, replacement: string): string;
}

const BEYOND_NARROW = /[^\0-\u10ff]/;

export function wideCharPattern(): WideCharPattern {
  return {
    [Symbol.replace](text: string, replacement: string): string {
      if (!BEYOND_NARROW.test(text)) return text; // nothing at or past U+1100: nothing wide
      let out = "";
      let copied = 0;
      let i = 0;
      while (i < text.length) {
        const cp = text.codePointAt(i)!;
        const size = cp > 0xffff ? 2 : 1;
        if (cp < 0x1100 || codePointWidth(cp) !== 2 || isZeroWidth(cp)) {
          i += size;
          continue;
        }
        const start = i;
        i += size;
        while (i < text.length) {
          const next = text.codePointAt(i)!;
          if (!isZeroWidth(next)) break;
          i += next > 0xffff ? 2 : 1;
        }
        out += text.slice(copied, start) + replacement.replaceAll("$1", text.slice(start, i));
        copied = i;
      }
      return copied === 0 ? text : out + text.slice(copied);
    },
  };
}
