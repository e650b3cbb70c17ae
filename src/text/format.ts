// Small text helpers for terminal output: colors that respect NO_COLOR and non-TTY output,
// compact numbers, durations, padding and truncation.

import { escapeLine } from "./escape.js";

type Env = Record<string, string | undefined>;
type Paint = (text: string) => string;

export interface Colors {
  enabled: boolean;
  bold: Paint;
  dim: Paint;
  red: Paint;
  green: Paint;
  yellow: Paint;
  blue: Paint;
  magenta: Paint;
  cyan: Paint;
}

/** Color only on a terminal, never with NO_COLOR (any non-empty value) or TERM=dumb; FORCE_COLOR wins. */
export function colorEnabled(env: Env, stream: { isTTY?: boolean }): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR && env.FORCE_COLOR !== "0") return true;
  return stream.isTTY === true && env.TERM !== "dumb";
}

export function createColors(enabled: boolean): Colors {
  const sgr =
    (open: number, close: number): Paint =>
    (text) =>
      enabled && text ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return {
    enabled,
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    blue: sgr(34, 39),
    magenta: sgr(35, 39),
    cyan: sgr(36, 39),
  };
}

export const shortId = (id: string): string => id.slice(0, 8);

/** 950 → "950", 12_345 → "12.3k", 4_200_000 → "4.2M". */
export function compactNumber(n: number): string {
  const abs = Math.abs(n);
  if (abs < 1000) return String(n);
  if (abs < 1_000_000) return `${trimZero((n / 1000).toFixed(abs < 10_000 ? 1 : 0))}k`;
  return `${trimZero((n / 1_000_000).toFixed(1))}M`;
}

function trimZero(text: string): string {
  return text.endsWith(".0") ? text.slice(0, -2) : text;
}

/** A rough human duration in one or two units: "12s", "5m", "2h 5m", "3d". */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

export function formatAgo(date: Date, now = Date.now()): string {
  const ms = now - date.getTime();
  return ms < 1000 ? "now" : `${formatDuration(ms)} ago`;
}

export const padEnd = (text: string, width: number): string =>
  text + " ".repeat(Math.max(0, width - text.length));
export const padStart = (text: string, width: number): string =>
  " ".repeat(Math.max(0, width - text.length)) + text;

export interface TruncateOptions {
  maxLines: number;
  maxChars: number;
}

/** Cuts long text to a few lines, saying how much was left out. */
export function truncateText(text: string, { maxLines, maxChars }: TruncateOptions): string {
  const lines = text.split("\n");
  let kept = lines.slice(0, maxLines).join("\n");
  if (kept.length > maxChars) kept = kept.slice(0, maxChars);
  if (kept.length === text.length) return text;
  const hiddenLines = lines.length - kept.split("\n").length;
  const note =
    hiddenLines > 0 ? `${hiddenLines} more line${hiddenLines === 1 ? "" : "s"}` : "truncated";
  return `${kept.trimEnd()} … (${note})`;
}

/** The first line of `text` that is not blank, trimmed: an error's or a command's headline. */
export function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .map((line) => line.trim())
      .find((line) => line) ?? ""
  );
}

/** One line of at most `max` characters. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Agent-controlled text on one terminal line: control characters shown as `\x1b` etc. */
export const safeLine = (text: string): string => escapeLine(text);

/** An agent as people see it (name + short id), safe for a terminal. */
export const shownName = (agent: { id: string; name: string }): string =>
  escapeLine(`${agent.name} ${shortId(agent.id)}`);

/**
 * JSON for a terminal or a pipe: JSON.stringify already escapes C0 controls; DEL, C1 controls and
 * bidi/line-separator characters are escaped too (`\u009b` is a CSI on some terminals).
 */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
