// Agent-controlled text is data, never terminal control: control characters and escape sequences
// become visible escapes (`\x1b`, `\x07`, …) wherever such text reaches a terminal.
import { LATIN_LOOKALIKE } from "./confusables.js";

/** C0 and C1 controls, DEL, line/paragraph separators and bidi overrides (which reorder text). */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Replaces C0/C1 control characters (and DEL) with `\xNN` escapes. Newlines (and tabs, as
 * spaces) are kept when `multiline` is set; otherwise they are escaped too (`\n`).
 */
export function escapeControl(text: string, options: { multiline?: boolean } = {}): string {
  const multiline = options.multiline ?? false;
  return text.replace(CONTROL, (ch) => {
    if (multiline && ch === "\n") return "\n";
    if (multiline && ch === "\t") return "    ";
    if (ch === "\n") return "\\n";
    if (ch === "\r" && multiline) return "";
    const code = ch.charCodeAt(0);
    if (code > 0xff) return `\\u${code.toString(16).padStart(4, "0")}`;
    return `\\x${code.toString(16).padStart(2, "0")}`;
  });
}

/** One line of agent text for a terminal: control characters escaped, newlines shown as `\n`. */
export function escapeLine(text: string): string {
  return escapeControl(text, { multiline: false });
}

/**
 * What a person must see as a code, never as itself: controls, format characters (zero-width,
 * bidi, tags, soft hyphen, …), line and paragraph separators, spaces other than U+0020,
 * default-ignorables (variation selectors, fillers, …), private-use, unassigned and lone
 * surrogates. Tested per class in test/security/hostile-text.test.ts.
 */
const INVISIBLE =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}\p{Default_Ignorable_Code_Point}]|(?! )\p{Zs}/u;

/** The first invisible character of `text` (INVISIBLE, a newline included) and where, if any. */
export function firstInvisible(text: string): { ch: string; index: number } | undefined {
  let index = 0;
  for (const ch of text) {
    index += 1;
    if (INVISIBLE.test(ch)) return { ch, index };
  }
  return undefined;
}

/** A part of a line drawn for a person: as is, or a mark (an escape, the newline's marker). */
export interface VisiblePiece {
  text: string;
  /** `escape`: a character drawn as its code (`\u200b`); `newline`: the marker of a real line break. */
  mark?: "escape" | "newline";
}

/** Drawn at the end of a line that a real newline (U+000A) ends. */
export const NEWLINE_MARK = "⏎";

const NAMED: Record<string, string> = { "\t": "\\t", "\r": "\\r" };

/** `\x1b`, `\u200b`, `\u{e0041}`: a code point as an escape a person can read. */
export function codeEscape(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const code = ch.codePointAt(0)!;
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, "0")}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, "0")}`;
  return `\\u{${code.toString(16)}}`;
}

/**
 * Text a person approves, character for character (an approval's arguments): one entry per line,
 * a real newline ending its line with NEWLINE_MARK (so it never reads like a typed `\n`, which
 * stays as typed), every invisible character as its code, and a look-alike letter inside a
 * Latin-looking word (Cyrillic `р` in `рm`) as its code too. Nothing is dropped or shortened.
 */
export function visibleLines(text: string): VisiblePiece[][] {
  const lines: VisiblePiece[][] = [];
  let line: VisiblePiece[] = [];
  let plain = "";
  const flush = () => {
    if (plain) line.push({ text: plain });
    plain = "";
  };
  const lookalikes = lookalikeOffsets(text);
  let offset = 0;
  for (const ch of text) {
    const at = offset;
    offset += ch.length;
    if (ch === "\n") {
      flush();
      line.push({ text: NEWLINE_MARK, mark: "newline" });
      lines.push(line);
      line = [];
    } else if (INVISIBLE.test(ch) || lookalikes.has(at)) {
      flush();
      line.push({ text: codeEscape(ch), mark: "escape" });
    } else {
      plain += ch;
    }
  }
  flush();
  lines.push(line);
  return lines;
}

/** visibleLines as plain text: lines joined by real newlines (for a terminal without styles). */
export function visibleText(text: string): string[] {
  return visibleLines(text).map((line) => line.map((p) => p.text).join(""));
}

/** A word: letters, marks, digits (and the invisibles that may hide inside one). */
const WORD = /[\p{L}\p{M}\p{N}\p{Cf}\p{Default_Ignorable_Code_Point}]+/gu;

/**
 * Offsets (UTF-16) of the look-alike letters to mark: in a word of ASCII letters and digits and
 * look-alikes only (a word that passes for Latin), each look-alike. A word with other letters of
 * its script (Russian `привет`) is left as written.
 */
function lookalikeOffsets(text: string): Set<number> {
  const marked = new Set<number>();
  if (/^[ -~\t\n]*$/.test(text)) return marked;
  for (const word of text.matchAll(WORD)) {
    const found: number[] = [];
    let passes = true;
    let offset = word.index;
    for (const ch of word[0]) {
      if (LATIN_LOOKALIKE.has(ch)) found.push(offset);
      else if (/[\p{L}\p{N}]/u.test(ch) && !/[\p{Script=Latin}0-9]/u.test(ch)) passes = false;
      offset += ch.length;
    }
    if (passes) for (const at of found) marked.add(at);
  }
  return marked;
}
