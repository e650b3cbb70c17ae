// Teaches blessed the column widths the views wrap with (text-width.ts): blessed's own table
// predates emoji, so it would lay 😀 out in one cell while terminals draw two, shifting the rest of
// the row. Call installTerminalWidths() once, before creating a screen.
import { createRequire } from "node:module";
import { codePointWidth, isZeroWidth, WIDE_RANGES, ZERO_WIDTH_CLASS } from "./text-width.js";

interface BlessedUnicode {
  charWidth(str: string | number, i?: number): number;
  codePointAt(str: string, i: number): number;
  combining: Record<number, boolean>;
  chars: { all: RegExp };
}

let installed = false;

export function installTerminalWidths(): void {
  if (installed) return;
  installed = true;
  const unicode = createRequire(import.meta.url)("blessed/lib/unicode.js") as BlessedUnicode;
  const original = unicode.charWidth.bind(unicode);
  unicode.charWidth = (str, i) => {
    const cp = typeof str === "number" ? str : unicode.codePointAt(str, i ?? 0);
    if (cp === 0x09 || typeof cp !== "number" || Number.isNaN(cp)) return original(str, i);
    return codePointWidth(cp);
  };
  // blessed puts a code point it finds here into the cell of the character before it.
  unicode.combining = new Proxy(unicode.combining, {
    get: (target, key) =>
      typeof key === "string" && /^\d+$/.test(key) ? isZeroWidth(Number(key)) : Reflect.get(target, key),
  });
  // blessed follows every match with a spare cell ("$1\x03"), so a wide character's second
  // column is never given to the next character.
  unicode.chars.all = wideCharPattern();
}

/** Matches exactly the code points codePointWidth() counts as two columns. */
export function wideCharPattern(): RegExp {
  const ranges = WIDE_RANGES.map(([lo, hi]) => `\\u{${lo.toString(16)}}-\\u{${hi.toString(16)}}`);
  return new RegExp(`((?!${ZERO_WIDTH_CLASS})[\\p{Emoji_Presentation}${ranges.join("")}])`, "gu");
}
