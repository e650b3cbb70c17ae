// What every tool's result view gets, and the rows they share: a result sits beneath its call,
// its first row led by "← " two columns in, the rows after it four in (entry-lines.ts draws the
// call above it). Agent text is escaped here (cleanText) before it is measured or drawn.
import type { EventRow } from "../../../agents/events.sql.js";
import { shortId } from "../../../text/format.js";
import { GLYPH } from "../glyphs.js";
import { clipRow, collapseSpans, type Row } from "../spans.js";
import { cleanText, ROLE, type Span, type Style } from "../theme.js";

/** The name of an agent of the tree by id, when the view knows it. */
export type AgentNames = (id: string) => string | undefined;

/** One tool result as its view gets it: pure data, so a view is a pure function of it. */
export interface ResultInput {
  tool: string | undefined;
  /** The call's arguments, when the call is known (grouped) and they were an object. */
  args: Record<string, unknown> | undefined;
  /** The result's content parsed, when it is a JSON object. */
  value: Record<string, unknown> | undefined;
  /** The result's content as the model read it. */
  content: string;
  event: EventRow;
  width: number;
  names: AgentNames;
}

/** A tool's result view: its rows, or undefined to fall back to the compact JSON (fallback.ts). */
export type ResultView = (input: ResultInput) => Row[] | undefined;

/** Rows kept of a result before "… K more lines". */
export const RESULT_ROWS = 8;

/** The first row's lead: under the call, two columns in. */
export const LEAD = `  ${GLYPH.result} `;
/** Rows after the first start here (under the result's text). */
export const INDENT = 4;

export const LABEL: Style = ROLE.faint;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An agent reference as a person reads it: a known id as "name 1a2b3c4d", anything else as is. */
export function agentRefText(ref: string, names: AgentNames): string {
  const name = UUID.test(ref) ? names(ref.toLowerCase()) : undefined;
  return name === undefined ? cleanText(ref, false) : `${cleanText(name, false)} ${shortId(ref)}`;
}

/** One result row: the lead, then `spans`, cut with "…" at the width. */
export function leadRow(spans: Span[], width: number, lead: Style = ROLE.call): Row {
  return clipRow([{ text: LEAD, style: lead }, ...spans], width);
}

/** A text beneath the lead, wrapped, at most `max` rows, then "… K more lines". */
export function leadBlock(
  text: string,
  style: Style | undefined,
  width: number,
  max = RESULT_ROWS,
  head: Span[] = [],
): Row[] {
  const { rows, hidden } = collapseSpans(
    [{ text: LEAD, style: ROLE.call }, ...head],
    cleanText(text.replace(/\s+$/, "")),
    style,
    width,
    INDENT,
    max,
  );
  return hidden > 0 ? [...rows, moreRow(hidden, width)] : rows;
}

export function moreRow(hidden: number, width: number): Row {
  const text = `${" ".repeat(INDENT)}${GLYPH.ellipsis} ${hidden} more line${hidden === 1 ? "" : "s"}`;
  return clipRow([{ text, style: LABEL }], width);
}

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
export const num = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isFinite(v) ? v : undefined;

/** Lines of a text as a file tool counts them (a last newline ends a line, it starts none). */
export function lineCount(text: string): number {
  if (text === "") return 0;
  return text.replace(/\r\n/g, "\n").replace(/\n$/, "").split("\n").length;
}

/**
 * The mark beside a sender's name on a child's final answer (its `send {final: true}`, or its
 * turn's text mailed for it): ` (final)`, plain words, so it reads the same in ASCII mode.
 */
export function finalMark(): Span[] {
  return [
    { text: " (", style: LABEL },
    { text: "final", style: ROLE.final },
    { text: ")", style: LABEL },
  ];
}

/**
 * A child's structured result (mail.result, the message parsed under its output schema) as
 * fields, one `key: value` line each: a string as it is, any other value as compact JSON. Only an
 * object with fields has them; anything else is undefined (its message, the same JSON, is shown).
 */
export function resultFields(result: unknown): string | undefined {
  if (!result || typeof result !== "object" || Array.isArray(result)) return undefined;
  const entries = Object.entries(result as Record<string, unknown>);
  if (entries.length === 0) return undefined;
  return entries
    .map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join("\n");
}

export const plural = (n: number, word: string, many = `${word}s`): string =>
  `${n} ${n === 1 ? word : many}`;
