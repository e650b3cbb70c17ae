// Styling for view lines: a Line is a blessed tag string (`tags: true`). Text enters a line only
// through `paint`, which escapes blessed tag syntax, so agent text can never become markup.
import blessed from "blessed";
import { escapeControl } from "../../text/escape.js";

/** `color: false` (NO_COLOR) emits no color tags; bold and inverse stay (they are not color). */
export interface Theme {
  color: boolean;
}

/** A string for a blessed element with `tags: true`, at most the width it was rendered for. */
export type Line = string;

export type Color = "red" | "green" | "yellow" | "blue" | "magenta" | "cyan" | "gray";

export interface Style {
  fg?: Color;
  bold?: boolean;
  inverse?: boolean;
  /** Faint text (shown gray; plain without color). */
  dim?: boolean;
}

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
 * One span as tags: control characters and blessed tag syntax escaped (idempotent on text that
 * went through cleanText, so nothing is escaped twice), wrapped in the style's tags.
 */
export function paint(theme: Theme, text: string, style: Style = {}): Line {
  if (!text) return "";
  let out = blessed.escape(escapeControl(text));
  const fg = style.fg ?? (style.dim ? "gray" : undefined);
  if (theme.color && fg) out = `{${fg}-fg}${out}{/${fg}-fg}`;
  if (style.bold) out = `{bold}${out}{/bold}`;
  if (style.inverse) out = `{inverse}${out}{/inverse}`;
  return out;
}

export function paintSpans(theme: Theme, spans: readonly Span[]): Line {
  return spans.map((s) => paint(theme, s.text, s.style)).join("");
}
