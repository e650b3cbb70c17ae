// Styling for view lines: a Line is a blessed tag string (`tags: true`). Text enters a line only
// through `paint`, which escapes blessed tag syntax, so agent text can never become markup.
// Every color the TUI uses is chosen here (ROLE), from the basic colors that read on both dark
// and light themes under every TERM; faint text is the terminal's dim attribute, never gray.
import { escape } from "./blessed-lib.js";
import { escapeControl } from "../../text/escape.js";

/**
 * `color: false` (NO_COLOR) emits no color tags; bold, dim and inverse stay (they are not color).
 * `ascii`: glyphs are drawn as ASCII (see glyphs.ts; applied where lines are placed).
 */
export interface Theme {
  color: boolean;
  ascii?: boolean;
}

/** A string for a blessed element with `tags: true`, at most the width it was rendered for. */
export type Line = string;

/**
 * The colors text may take. Not black, white or gray (invisible on one theme or the other, and
 * gray is black under 8-color terminfo such as tmux-256color's), not blue (unreadable on black).
 */
export type Color = "red" | "green" | "yellow" | "magenta" | "cyan";

export interface Style {
  fg?: Color;
  bold?: boolean;
  inverse?: boolean;
  /** Faint text: the terminal's dim attribute (SGR 2), also without color. */
  dim?: boolean;
}

/** The styles by meaning: views take their looks from here. */
export const ROLE = {
  faint: { dim: true },
  strong: { bold: true },
  userGlyph: { fg: "green", bold: true },
  assistantGlyph: { fg: "cyan", bold: true },
  call: { fg: "yellow" },
  toolName: { fg: "yellow", bold: true },
  error: { fg: "red" },
  warn: { fg: "yellow" },
  alarm: { fg: "yellow", bold: true },
  capture: { fg: "magenta" },
  captureLabel: { fg: "magenta", bold: true },
  mail: { fg: "cyan", bold: true },
  fork: { fg: "green" },
  running: { fg: "green", bold: true },
  waiting: { fg: "cyan", bold: true },
  idle: { dim: true },
  dead: { fg: "red" },
  /** An idle agent whose last turn failed (its model requests failed for good). */
  failed: { fg: "red", bold: true },
  received: { fg: "green" },
  /** The mark on a child's final answer (its mail, a wait's entry for it). */
  final: { fg: "green", bold: true },
  /** An awaited agent still at work (the status layer, a fan-in result). */
  awaited: { fg: "yellow" },
  busy: { fg: "cyan" },
  busyGlyph: { fg: "cyan", bold: true },
  neighbour: { fg: "cyan" },
  model: { fg: "cyan" },
  prompt: { fg: "cyan", bold: true },
  capturePrompt: { fg: "magenta", bold: true },
  problemBadge: { fg: "red", bold: true, inverse: true },
  captureBadge: { fg: "magenta", bold: true, inverse: true },
  deadBadge: { fg: "red", bold: true, inverse: true },
} as const satisfies Record<string, Style>;

/** A run of plain text (already control-escaped, not tag-escaped) and how it looks. */
export interface Span {
  text: string;
  style?: Style;
}

/** Agent-controlled text as display text: control characters become visible escapes. */
export function cleanText(text: string, multiline = true): string {
  return escapeControl(text, { multiline });
}

/**
 * blessed has no dim attribute: dim text is tagged {blink} (which the TUI never uses) and the
 * layout turns blink into SGR 2 on its way to the terminal (dimForBlink).
 */
const DIM_TAG = "blink";

/**
 * One span as tags: control characters and blessed tag syntax escaped (idempotent on text that
 * went through cleanText, so nothing is escaped twice), wrapped in the style's tags.
 */
export function paint(theme: Theme, text: string, style: Style = {}): Line {
  if (!text) return "";
  let out = escape(escapeControl(text));
  if (theme.color && style.fg) out = `{${style.fg}-fg}${out}{/${style.fg}-fg}`;
  if (style.dim) out = `{${DIM_TAG}}${out}{/${DIM_TAG}}`;
  if (style.bold) out = `{bold}${out}{/bold}`;
  if (style.inverse) out = `{inverse}${out}{/inverse}`;
  return out;
}

export function paintSpans(theme: Theme, spans: readonly Span[]): Line {
  return spans.map((s) => paint(theme, s.text, s.style)).join("");
}

/**
 * Terminal output from blessed with SGR 5 (blink, how dim is tagged) turned into SGR 2 (dim);
 * the 5 of `38;5;N` / `48;5;N` is a color's, left alone. blessed writes whole sequences at once.
 */
export function dimForBlink(output: string): string {
  if (!output.includes("\x1b[")) return output;
  // eslint-disable-next-line no-control-regex
  return output.replace(/\x1b\[([0-9;]*)m/g, (whole, params: string) => {
    const parts = params.split(";");
    let changed = false;
    for (let i = 0; i < parts.length; i++) {
      if (parts[i] === "38" || parts[i] === "48") {
        i += parts[i + 1] === "2" ? 4 : 2;
      } else if (parts[i] === "5") {
        parts[i] = "2";
        changed = true;
      }
    }
    return changed ? `\x1b[${parts.join(";")}m` : whole;
  });
}
