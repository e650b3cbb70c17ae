// The glyph table: every non-ASCII character the views draw, each present in DejaVu Sans Mono
// (and so in Menlo, which derives from it, and in stock Linux desktops), with the one-column ASCII
// character drawn instead in ASCII mode (WARREN_ASCII=1, or automatically on TERM=linux).
// test/ui/glyphs.test.ts checks the fonts and that no other non-ASCII literal is drawn.

/** The glyphs by meaning. Views take their glyphs from here. */
export const GLYPH = {
  user: "❯",
  assistant: "●",
  call: "→",
  result: "←",
  warning: "⚠",
  capture: "✎",
  mail: "✉",
  fork: "↳",
  running: "◐",
  waiting: "◌",
  idle: "○",
  dead: "✗",
  received: "✓",
  /** The end of a streaming answer. */
  cursor: "▍",
  rule: "─",
  bar: "│",
  parent: "↑",
  child: "↓",
  prev: "←",
  next: "→",
  selected: "›",
  command: "»",
  ellipsis: "…",
  dot: "·",
  dash: "—",
  /** The end of a line a real newline ends, in text a person approves (text/escape.ts). */
  newline: "⏎",
  /** The end of a row that a long line goes on from (the approval block's hard wrap). */
  wrap: "↩",
  /** Lines removed, in an edit's short diff count (`+3 −1`). */
  minus: "−",
  /** A fold (rewound events) shut, and open. */
  folded: "▸",
  unfolded: "▾",
} as const;

/** The busy line's spinner: a quarter turning clockwise. */
export const SPINNER_FRAMES = ["◴", "◷", "◶", "◵"];

/** The panel's frame corners. */
export const CORNER = { topLeft: "┌", topRight: "┐", bottomLeft: "└", bottomRight: "┘" } as const;

/**
 * Every non-ASCII character a view may draw → the ASCII character drawn for it in ASCII mode.
 * One column each, so a line keeps its layout when transliterated.
 */
export const ASCII_FOR: ReadonlyMap<string, string> = new Map([
  [GLYPH.user, ">"],
  [GLYPH.assistant, "*"],
  [GLYPH.call, ">"],
  [GLYPH.result, "<"],
  [GLYPH.warning, "!"],
  [GLYPH.capture, "#"],
  [GLYPH.mail, "@"],
  [GLYPH.fork, "Y"],
  [GLYPH.running, "+"],
  [GLYPH.waiting, "~"],
  [GLYPH.idle, "o"],
  [GLYPH.dead, "x"],
  [GLYPH.received, "v"],
  [GLYPH.cursor, "_"],
  [GLYPH.rule, "-"],
  [GLYPH.bar, "|"],
  [GLYPH.parent, "^"],
  [GLYPH.child, "v"],
  [GLYPH.selected, ">"],
  [GLYPH.command, ">"],
  [GLYPH.ellipsis, "."],
  [GLYPH.dot, "-"],
  [GLYPH.dash, "-"],
  [GLYPH.newline, "$"],
  [GLYPH.wrap, "\\"],
  [GLYPH.minus, "-"],
  [GLYPH.folded, "+"],
  [GLYPH.unfolded, "-"],
  ["×", "x"],
  [SPINNER_FRAMES[0]!, "|"],
  [SPINNER_FRAMES[1]!, "/"],
  [SPINNER_FRAMES[2]!, "-"],
  [SPINNER_FRAMES[3]!, "\\"],
  [CORNER.topLeft, "+"],
  [CORNER.topRight, "+"],
  [CORNER.bottomLeft, "+"],
  [CORNER.bottomRight, "+"],
]);

const KNOWN = new RegExp(`[${[...ASCII_FOR.keys()].join("").replace(/[\\\]^-]/g, "\\$&")}]`, "gu");

/**
 * A painted line with every glyph of the table drawn as its ASCII character (tags are ASCII and
 * untouched). Text from agents is transliterated too: a terminal that cannot draw the glyphs
 * cannot draw them in a message either.
 */
export function toAscii(line: string): string {
  return line.replace(KNOWN, (glyph) => ASCII_FOR.get(glyph) ?? glyph);
}

/** ASCII mode: WARREN_ASCII=1 (0 turns it off), else the Linux console (its fonts lack most). */
export function asciiWanted(env: Record<string, string | undefined>): boolean {
  const flag = env.WARREN_ASCII?.trim();
  if (flag) return flag !== "0" && flag.toLowerCase() !== "false";
  return env.TERM === "linux";
}
