// One scrollback entry → its rows at a width: the SPEC §4 glyphs (glyphs.ts), agent text escaped
// once here, long output collapsed, agents named (name + short id) where the view knows them.
// Pure: same entry, width and names, same lines.
import type { EventRow } from "../../agents/events.sql.js";
import { shortId } from "../../text/format.js";
import {
  collapseSpans,
  createWrapper,
  endRowWith,
  paintRows,
  wrapSpans,
  type Row,
  type Wrapper,
} from "./spans.js";
import { GLYPH } from "./glyphs.js";
import {
  agentRefText,
  finalMark,
  resultFields,
  resultRows,
  type AgentNames,
  type AgentOrder,
  type ResultContext,
} from "./tools/index.js";
import { cleanText, ROLE, type Line, type Span, type Style, type Theme } from "./theme.js";
import { parseObject, stringOrUndefined } from "../../text/json.js";
import { isPerson } from "../../llm/framing.js";

export type ScrollEntry =
  | { kind: "event"; event: EventRow }
  /**
   * A tool call and its result, one group (tool-group.ts): the result beneath its call once it
   * arrives; till then, while the agent is busy, the spinner's glyph in the call's row below it.
   */
  | { kind: "call"; call: EventRow; result?: EventRow; spinner?: string }
  /** A model response still streaming (replaced by its `assistant` event when it ends). */
  | { kind: "stream"; agentId: string; text: string; reasoning: string }
  /** A local message (a command's error, /help text); never stored. */
  | { kind: "notice"; id: number; level: "info" | "error"; text: string }
  /** Person input queued for a busy agent, delivered when its turn ends. */
  | { kind: "pending"; id: number; text: string }
  /**
   * Events a rewind undid, folded behind this one line (rewound-fold.ts); when `open`, they
   * follow it, dim. `first`: the first one's id (the fold's key).
   */
  | { kind: "rewound"; first: number; count: number; at: Date; open: boolean };

/** Rows kept of a mail body or tool arguments before "… K more lines". */
export const MAIL_ROWS = 12;
export const ARGS_ROWS = 3;
export const REASONING_ROWS = 6;
/** A message longer than LONG_CHARS shows only its first LONG_ROWS rows. */
export const LONG_CHARS = 50_000;
export const LONG_ROWS = 400;

const S = {
  user: ROLE.strong,
  glyphUser: ROLE.userGlyph,
  assistant: undefined as Style | undefined,
  glyphAssistant: ROLE.assistantGlyph,
  call: ROLE.call,
  toolName: ROLE.toolName,
  result: ROLE.faint,
  error: ROLE.error,
  warn: ROLE.warn,
  capture: ROLE.capture,
  captureLabel: ROLE.captureLabel,
  mailLabel: ROLE.mail,
  fork: ROLE.fork,
  dim: ROLE.faint,
};

const NO_NAMES: AgentNames = () => undefined;

/** The lines of one entry (no blank separator); an entry with nothing to show has none. */
export function renderEntry(
  entry: ScrollEntry,
  width: number,
  theme: Theme,
  names: AgentNames = NO_NAMES,
  order?: AgentOrder,
): Line[] {
  return paintRows(theme, entryRows(entry, width, names, order));
}

export function entryRows(
  entry: ScrollEntry,
  width: number,
  names: AgentNames = NO_NAMES,
  order?: AgentOrder,
): Row[] {
  const context: ResultContext = { names, ...(order ? { order } : {}) };
  switch (entry.kind) {
    case "event":
      // Undone by a rewind, shown only when its fold is open (rewound-fold.ts): dim.
      return entry.event.rewound_at
        ? dimRows(eventRows(entry.event, width, context))
        : eventRows(entry.event, width, context);
    case "call":
      return entry.call.rewound_at
        ? dimRows(callGroupRows(entry, width, context))
        : callGroupRows(entry, width, context);
    case "rewound":
      return foldRows(entry, width);
    case "stream":
      return streamRows(entry.text, entry.reasoning, width);
    case "notice":
      return noticeRows(entry.text, entry.level, width);
    case "pending":
      return [
        ...block([{ text: `${GLYPH.user} `, style: S.dim }], entry.text, S.dim, width),
        ...wrapSpans(
          [
            {
              text: `  ${GLYPH.waiting} queued ${GLYPH.dash} delivered when the turn ends`,
              style: S.dim,
            },
          ],
          width,
          2,
        ),
      ];
  }
}

/** The line a run of rewound events is folded behind (open: they follow it). */
function foldRows(entry: Extract<ScrollEntry, { kind: "rewound" }>, width: number): Row[] {
  const two = (n: number) => String(n).padStart(2, "0");
  const when = `${two(entry.at.getHours())}:${two(entry.at.getMinutes())}`;
  const what = `${entry.count} event${entry.count === 1 ? "" : "s"} rewound at ${when}`;
  const text = entry.open
    ? `${GLYPH.unfolded} ${what} ${GLYPH.dash} Enter (empty input) or click folds them`
    : `${GLYPH.folded} ${what} ${GLYPH.dash} Enter (empty input) or click unfolds`;
  return wrapSpans([{ text, style: S.dim }], width, 2);
}

/** Rows of an event a rewind undid: every span dim (their colors kept). */
function dimRows(rows: Row[]): Row[] {
  return rows.map((row) => row.map((span) => ({ ...span, style: { ...span.style, dim: true } })));
}

/** The call's rows, then its result's beneath (or the spinner while it runs): no blank between. */
function callGroupRows(
  entry: Extract<ScrollEntry, { kind: "call" }>,
  width: number,
  context: ResultContext,
): Row[] {
  const rows = toolCallRows(entry.call, width, context.names);
  if (entry.result) return [...rows, ...resultRows(entry.result, entry.call, width, context)];
  if (entry.spinner) {
    rows.push(
      clip(
        [
          { text: `  ${entry.spinner} `, style: ROLE.busyGlyph },
          { text: "running", style: S.dim },
        ],
        width,
      ),
    );
  }
  return rows;
}

function eventRows(event: EventRow, width: number, context: ResultContext): Row[] {
  const names = context.names;
  const data = event.data ?? {};
  const content = event.content;
  switch (event.kind) {
    case "user":
      return block([{ text: `${GLYPH.user} `, style: S.glyphUser }], content, S.user, width);
    case "assistant":
      return assistantRows(content, stringOrUndefined(data.reasoning) ?? "", data, width);
    case "tool_call":
      return toolCallRows(event, width, names);
    case "tool_result":
      // A result whose call is not loaded (an older page): beneath nothing, as it is.
      return resultRows(event, undefined, width, context);
    case "capture":
      return [
        ...wrapSpans(
          [
            { text: `${GLYPH.capture} `, style: S.captureLabel },
            { text: `captured ${GLYPH.dash} no model sees this`, style: S.capture },
          ],
          width,
          2,
        ),
        ...block(
          [{ text: `${GLYPH.bar} `, style: S.capture }],
          content,
          S.capture,
          width,
          `${GLYPH.bar} `,
        ),
      ];
    case "mail_in":
      return mailInRows(event, width);
    case "mail_out": {
      const to = stringOrUndefined(data.to_name) ?? stringOrUndefined(data.to) ?? "?";
      const toId = stringOrUndefined(data.to) ?? stringOrUndefined(data.to_id);
      const who = toId && toId !== to ? `${to} ${shortId(toId)}` : to;
      return mailRows(
        `${GLYPH.mail} to ${who}: `,
        stringOrUndefined(data.message) ?? content,
        width,
      );
    }
    case "fork": {
      const name = stringOrUndefined(data.name);
      const id = stringOrUndefined(data.agent_id);
      const text = name && id ? `forked ${name} ${shortId(id)}` : content;
      return block([{ text: `${GLYPH.fork} `, style: S.fork }], text, S.fork, width);
    }
    case "killed":
      return block(
        [{ text: `${GLYPH.warning} `, style: S.error }],
        content || "killed",
        S.error,
        width,
      );
    case "interrupted":
      return block(
        [{ text: `${GLYPH.warning} `, style: S.warn }],
        content.startsWith("interrupted") ? content : `interrupted: ${content}`,
        S.warn,
        width,
      );
    case "error":
      return block([{ text: `${GLYPH.warning} `, style: S.error }], content, S.error, width);
    case "command":
      // A command's recorded answer reads like the notice it was when it was typed (actions.ts).
      if (data.answer === "error" || data.answer === "info") {
        return noticeRows(content, data.answer, width);
      }
      return block([{ text: `${GLYPH.command} `, style: S.dim }], content, S.dim, width);
    case "system":
      return block([{ text: `${GLYPH.dot} `, style: S.dim }], content, S.dim, width);
    default:
      // A kind this build does not know (a newer writer): shown plainly rather than hidden.
      return block(
        [{ text: `[${cleanText(String(event.kind), false)}] `, style: S.dim }],
        content,
        undefined,
        width,
      );
  }
}

function noticeRows(text: string, level: "info" | "error", width: number): Row[] {
  return level === "error"
    ? block([{ text: `${GLYPH.warning} `, style: S.error }], text, S.error, width)
    : block([{ text: `${GLYPH.dot} `, style: S.dim }], text, undefined, width);
}

function assistantRows(
  text: string,
  reasoning: string,
  data: Record<string, unknown>,
  width: number,
): Row[] {
  const rows = reasoning.trim() ? reasoningRows(reasoning, width) : [];
  const calls = Array.isArray(data.tool_calls) ? data.tool_calls.length : 0;
  // A response that only called tools says nothing itself: its calls follow as their own events.
  if (!text.trim() && calls > 0) return rows;
  const body = text.trim() ? text.replace(/\s+$/, "") : "(no text)";
  return [
    ...rows,
    ...block([{ text: `${GLYPH.assistant} `, style: S.glyphAssistant }], body, S.assistant, width),
  ];
}

function streamRows(text: string, reasoning: string, width: number): Row[] {
  const rows = reasoning.trim() ? reasoningRows(reasoning, width) : [];
  const spans: Span[] = [
    { text: `${GLYPH.assistant} `, style: S.glyphAssistant },
    { text: cleanText(text.replace(/\s+$/, "")), style: S.assistant },
    { text: GLYPH.cursor, style: S.glyphAssistant },
  ];
  return [...rows, ...wrapSpans(spans, width, 2)];
}

export type StreamEntry = Extract<ScrollEntry, { kind: "stream" }>;

/**
 * How far a streaming answer has been wrapped: its text up to where its last word began, as rows
 * that no later text can change. The text only grows while it streams, so the next layout of the
 * stream at this width wraps only what was appended.
 */
export interface StreamProgress {
  width: number;
  /** The displayed text the progress was made from. */
  seen: string;
  /** How much of `seen` is in `wrapper` (up to where its last word began). */
  wrapped: number;
  /** The glyph and the wrapped text. */
  wrapper: Wrapper;
  /** The wrapper's finished rows, painted. */
  lines: Line[];
}

/**
 * A stream entry's lines (as renderEntry gives them), going on from `progress` when it was made
 * at this width from a text that this one extends; else from the start.
 */
export function renderStream(
  entry: StreamEntry,
  width: number,
  theme: Theme,
  progress?: StreamProgress,
): { lines: Line[]; progress: StreamProgress } {
  const reasoning = entry.reasoning.trim()
    ? paintRows(theme, reasoningRows(entry.reasoning, width))
    : [];
  const body = cleanText(entry.text.replace(/\s+$/, ""));
  let from = progress;
  if (!from || from.width !== width || !body.startsWith(from.seen)) {
    const wrapper = createWrapper(width, 2);
    wrapper.add({ text: `${GLYPH.assistant} `, style: S.glyphAssistant });
    from = { width, seen: "", wrapped: 0, wrapper, lines: [] };
  }
  // The last word may still grow (and move to the next row): rows are final only before it.
  const stable = lastWordStart(body);
  const next = from.wrapper.copy();
  if (stable > from.wrapped)
    next.add({ text: body.slice(from.wrapped, stable), style: S.assistant });
  const done = next.rows().slice(from.wrapper.done, next.done);
  const lines = from.lines.concat(paintRows(theme, done));
  const tail = next.copy();
  tail.add({ text: body.slice(Math.max(stable, from.wrapped)), style: S.assistant });
  tail.add({ text: GLYPH.cursor, style: S.glyphAssistant });
  const open = paintRows(theme, tail.rows().slice(next.done));
  return {
    lines: [...reasoning, ...lines, ...open],
    progress: { width, seen: body, wrapped: Math.max(stable, from.wrapped), wrapper: next, lines },
  };
}

/** Where the last run of non-space characters of `text` begins (its length when it ends in one). */
function lastWordStart(text: string): number {
  let at = text.length;
  while (at > 0 && !/\s/.test(text[at - 1]!)) at--;
  return at;
}

/** Thinking, dimmed: only its last rows (the rest is summarised as "… K earlier lines"). */
function reasoningRows(reasoning: string, width: number): Row[] {
  const tail = reasoning.length > 4000 ? reasoning.slice(-4000) : reasoning;
  const all = wrapSpans([{ text: "  " }, { text: cleanText(tail.trim()), style: S.dim }], width, 2);
  if (all.length <= REASONING_ROWS) return all;
  const kept = all.slice(-REASONING_ROWS);
  const note = `  ${GLYPH.ellipsis} ${all.length - REASONING_ROWS} earlier lines of thinking`;
  return [[{ text: note, style: S.dim }], ...kept].map((r) => clip(r, width));
}

function toolCallRows(event: EventRow, width: number, names: AgentNames): Row[] {
  const data = event.data ?? {};
  const name = stringOrUndefined(data.name) ?? stringOrUndefined(data.tool);
  // Without data the content is the call as text ("name(args)").
  if (!name)
    return block([{ text: `${GLYPH.call} `, style: S.call }], event.content, undefined, width);
  const rawArgs = data.arguments ?? data.args;
  const args = typeof rawArgs === "string" ? (parseObject(rawArgs) ?? rawArgs) : rawArgs;
  const obj = args && typeof args === "object" ? (args as Record<string, unknown>) : undefined;
  if (name === "send" && obj && typeof obj.message === "string") {
    const to = typeof obj.to === "string" ? agentRefText(obj.to, names) : "?";
    return mailRows(`${GLYPH.mail} to ${to}: `, obj.message, width);
  }
  if (name === "bash" && obj && typeof obj.command === "string") {
    const head: Span[] = [
      { text: `${GLYPH.call} `, style: S.call },
      { text: "bash", style: S.toolName },
      { text: ": ", style: S.call },
    ];
    return withMore(
      collapseSpans(head, cleanText(obj.command), undefined, width, 2, ARGS_ROWS),
      width,
    );
  }
  const argText = obj
    ? describeObject(obj, names)
    : typeof args === "string"
      ? args
      : JSON.stringify(args ?? "");
  const head: Span[] = [
    { text: `${GLYPH.call} `, style: S.call },
    { text: cleanText(name, false), style: S.toolName },
    { text: "(", style: S.call },
  ];
  // Only what could be shown is wrapped: a 64 KiB fork prompt costs a few rows' worth.
  const cap = ARGS_ROWS * Math.max(1, width);
  const shown = cleanText(argText.length > cap ? argText.slice(0, cap) : argText, false);
  const rows = wrapSpans([...head, { text: shown }, { text: ")", style: S.call }], width, 2);
  if (rows.length <= ARGS_ROWS && shown.length === argText.length) return rows;
  const kept = rows.slice(0, ARGS_ROWS);
  kept[kept.length - 1] = endRowWith(
    kept[kept.length - 1]!,
    { text: `${GLYPH.ellipsis})`, style: S.call },
    width,
  );
  return kept;
}

/** mail_in content is "Mail from NAME (ID): body" (data says who) or the older JSON form. */
function mailInRows(event: EventRow, width: number): Row[] {
  const data = event.data ?? {};
  const parsed = parseObject(event.content);
  let from =
    data.from === null ? null : (stringOrUndefined(data.from) ?? stringOrUndefined(parsed?.from));
  let name = stringOrUndefined(data.from_name) ?? stringOrUndefined(parsed?.from_name);
  // data.message: the raw body (content is framed for the model as <mail from="NAME">…</mail>).
  let body = stringOrUndefined(data.message) ?? stringOrUndefined(parsed?.message) ?? event.content;
  if (data.message === undefined && parsed?.message === undefined) {
    const person = /^Mail from the person: /.exec(body);
    const agent = /^Mail from (.*?) \(([0-9a-f-]{36})\): /s.exec(body);
    if (person) {
      body = body.slice(person[0].length);
      from = null;
    } else if (agent) {
      body = body.slice(agent[0].length);
      name ??= agent[1];
      from ??= agent[2];
    }
  }
  // The person is drawn as "human" here (their own view); agents read the marker (llm/framing.ts).
  const who = isPerson(from) ? "human" : `${name ?? "?"} ${shortId(from!)}`;
  // A child's final answer (mail.final, kept in the event's data since it is written; an event
  // written before says nothing of it and draws as ordinary mail), marked beside the sender; a
  // structured result (mail.result) as fields beneath, rather than the same value as JSON.
  const final = (data.final ?? parsed?.final) === true;
  const fields = resultFields("result" in data ? data.result : parsed?.result);
  if (!final && !fields) return mailRows(`${GLYPH.mail} from ${who}: `, body, width);
  return mailRows(`${GLYPH.mail} from ${who}`, fields ? `\n${fields}` : body, width, [
    ...(final ? finalMark() : []),
    { text: fields ? ":" : ": ", style: S.mailLabel },
  ]);
}

function mailRows(label: string, body: string, width: number, mark: Span[] = []): Row[] {
  const head: Span[] = [{ text: cleanText(label, false), style: S.mailLabel }, ...mark];
  return withMore(
    collapseSpans(head, cleanText(body.replace(/\s+$/, "")), undefined, width, 2, MAIL_ROWS),
    width,
  );
}

/** Glyph spans, then the body; continuation rows indented under the body. */
function block(
  head: Span[],
  text: string,
  style: Style | undefined,
  width: number,
  cont?: string,
): Row[] {
  let body = cleanText(text.replace(/\s+$/, ""));
  let hidden = 0;
  if (body.length > LONG_CHARS) {
    // A huge message shows its first LONG_ROWS rows: a frame never wraps megabytes.
    if (!cont) return withMore(collapseSpans(head, body, style, width, 2, LONG_ROWS), width);
    const total = body.split("\n").length;
    const cut = body.slice(0, LONG_ROWS * width);
    let kept = cut.split("\n");
    // The last kept line is partial when the cut fell inside it (and it was not dropped below).
    let partial = cut.length < body.length && body[cut.length] !== "\n" ? 1 : 0;
    if (kept.length > LONG_ROWS) [kept, partial] = [kept.slice(0, LONG_ROWS), 0];
    hidden = total - kept.length + partial;
    body = kept.join("\n");
  }
  if (!cont) return wrapSpans([...head, { text: body, style }], width, 2);
  // A continuation prefix drawn on every row (e.g. the capture bar).
  const inner = Math.max(1, width - cont.length);
  const rows = wrapSpans([{ text: body, style }], inner, 0).map((row) => [
    { text: cont, style: head[0]?.style },
    ...row,
  ]);
  return withMore({ rows: rows.slice(0, LONG_ROWS), hidden }, width);
}

function withMore({ rows, hidden }: { rows: Row[]; hidden: number }, width: number): Row[] {
  if (hidden <= 0) return rows;
  const note = `  ${GLYPH.ellipsis} ${hidden} more line${hidden === 1 ? "" : "s"}`;
  return [...rows, clip([{ text: note, style: S.dim }], width)];
}

function clip(row: Row, width: number): Row {
  return wrapSpans(row, width, 0)[0] ?? [];
}

/** Tool arguments that name agents: an id the view knows shows as its name and short id. */
const AGENT_ARGS = new Set(["from_agents", "agent_id", "to"]);

function describeObject(obj: Record<string, unknown>, names: AgentNames): string {
  const json = (v: unknown) => JSON.stringify(v) ?? String(v);
  const ref = (v: unknown) => {
    if (typeof v !== "string") return json(v);
    const label = agentRefText(v, names);
    return label === v ? json(v) : label;
  };
  return Object.entries(obj)
    .map(([k, v]) => {
      if (!AGENT_ARGS.has(k)) return `${k}: ${json(v)}`;
      return `${k}: ${Array.isArray(v) ? `[${v.map(ref).join(", ")}]` : ref(v)}`;
    })
    .join(", ");
}
