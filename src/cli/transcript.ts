// Events → text lines, as in the TUI's scrollback: user ❯, assistant ●, tool call →, tool result ←,
// error ⚠, mail ✉, fork ↳, killed ✗; captured text is marked so it is never mistaken for a message.
import type { EventRow } from "../agents/events.sql.js";
import { escapeControl, escapeLine } from "../text/escape.js";
import { oneLine, shortId, truncateText, type Colors } from "../text/format.js";
import { parseObject, stringOrUndefined } from "../text/json.js";
import { isPerson } from "../llm/framing.js";

export interface TranscriptOptions {
  color: Colors;
  /** Show tool results and arguments whole instead of truncated. */
  full: boolean;
}

const RESULT_LIMIT = { maxLines: 12, maxChars: 1500 };
const ARGS_LIMIT = 160;

type Hue = Exclude<keyof Colors, "enabled">;

/** Kinds shown as a glyph and their content, both in one colour (`plain`: the content unpainted). */
const GLYPHS = new Map<string, { glyph: string; hue: Hue; plain?: true }>([
  ["user", { glyph: "❯", hue: "bold" }],
  ["capture", { glyph: "✎ capture", hue: "magenta" }],
  ["command", { glyph: "»", hue: "dim" }],
  ["system", { glyph: "·", hue: "dim" }],
  ["fork", { glyph: "↳", hue: "green", plain: true }],
  ["killed", { glyph: "✗", hue: "red" }],
  ["interrupted", { glyph: "⚠", hue: "yellow" }],
  ["error", { glyph: "⚠", hue: "red" }],
]);

export function renderTranscript(events: EventRow[], options: TranscriptOptions): string[] {
  return events.flatMap((event) => renderEvent(event, options));
}

/** The lines of one event: a glyph, then the content; continuation lines are indented. */
export function renderEvent(event: EventRow, { color, full }: TranscriptOptions): string[] {
  const shown = GLYPHS.get(event.kind);
  if (shown) {
    const paint = color[shown.hue];
    return block(paint(shown.glyph), event.content, shown.plain ? undefined : paint);
  }
  const data = event.data ?? {};
  switch (event.kind) {
    case "assistant":
      // An answer that only called tools has no text: its calls follow as their own lines.
      return event.content.trim() === "" ? [] : block(color.blue("●"), event.content);
    case "tool_call": {
      const name = stringOrUndefined(data.name) ?? stringOrUndefined(data.tool) ?? "tool";
      const args = describeArgs(data.arguments ?? data.args ?? event.content, full);
      return [`${color.yellow("→")} ${color.bold(escapeLine(name))}(${escapeLine(args)})`];
    }
    case "tool_result": {
      const text = full ? event.content : truncateText(event.content, RESULT_LIMIT);
      const label = stringOrUndefined(data.name) ?? stringOrUndefined(data.tool);
      const prefix = label ? `${color.dim(`${escapeLine(label)}:`)} ` : "";
      return block(color.yellow("←"), prefix + text, color.dim);
    }
    case "mail_in":
      return renderMailIn(event, color);
    case "mail_out": {
      const to = stringOrUndefined(data.to_name) ?? stringOrUndefined(data.to) ?? "";
      const toId = stringOrUndefined(data.to);
      const who = toId && to !== toId ? `${to} ${shortId(toId)}` : to;
      return block(
        color.cyan(`✉ to ${escapeLine(who)}:`),
        stringOrUndefined(data.message) ?? event.content,
      );
    }
    default:
      // A kind this build does not know yet (a newer writer): show it plainly rather than hide it.
      return block(color.dim(`[${escapeLine(String(event.kind))}]`), event.content);
  }
}

/** mail_in content is the JSON of {from, from_name, message}; anything else is shown as is. */
function renderMailIn(event: EventRow, color: Colors): string[] {
  // data.message: the raw body (content is framed for the model as <mail from="NAME">…</mail>).
  const parsed = event.data?.message === undefined ? parseObject(event.content) : event.data;
  const message = stringOrUndefined(parsed?.message);
  if (message === undefined) return block(color.cyan("✉"), event.content);
  const from = stringOrUndefined(parsed?.from);
  const name = stringOrUndefined(parsed?.from_name) ?? from;
  const who = isPerson(from) ? "human" : `${name} ${shortId(from!)}`;
  return block(color.cyan(`✉ from ${escapeLine(who)}:`), message);
}

/** Agent text is escaped here (control characters shown as `\x1b`), before any painting. */
function block(glyph: string, content: string, paint: (text: string) => string = (t) => t) {
  const safe = escapeControl(content, { multiline: true });
  const [first = "", ...rest] = safe.replace(/\s+$/, "").split("\n");
  return [`${glyph} ${paint(first)}`.trimEnd(), ...rest.map((line) => `  ${paint(line)}`)];
}

/** Tool arguments on one line: compact JSON when they parse, the raw text otherwise. */
function describeArgs(args: unknown, full: boolean): string {
  let text: string;
  if (typeof args === "string") {
    const parsed = parseObject(args);
    text = parsed === undefined ? args : JSON.stringify(parsed);
  } else {
    text = JSON.stringify(args) ?? "";
  }
  return full ? text : oneLine(text, ARGS_LIMIT);
}
