// The file tools' results as what they did to which file: the path and a line count, an edit as a
// short diff count (`+3 −1`), a search as how many it found. The file's text stays in the event
// (--full, warren log --json); the scrollback shows the fact.
import { lineDiff } from "../../../text/line-diff.js";
import { GLYPH } from "../glyphs.js";
import type { Span } from "../theme.js";
import { cleanText, ROLE } from "../theme.js";
import { LABEL, leadRow, lineCount, num, plural, str, type ResultView } from "./common.js";

const pathSpan = (path: string): Span => ({ text: cleanText(path, false), style: ROLE.strong });

export const readFileResult: ResultView = ({ value, width }) => {
  const path = str(value?.path);
  const total = num(value?.total_lines);
  if (!path || total === undefined) return undefined;
  const read = lineCount(str(value?.content) ?? "");
  const part =
    value?.truncated === true ? `${read} of ${plural(total, "line")}` : plural(total, "line");
  return [leadRow([pathSpan(path), { text: ` ${part}`, style: LABEL }], width)];
};

export const writeFileResult: ResultView = ({ value, args, width }) => {
  const path = str(value?.path);
  if (!path) return undefined;
  const content = str(args?.content);
  const size =
    content !== undefined
      ? plural(lineCount(content), "line")
      : plural(num(value?.bytes) ?? 0, "byte");
  return [leadRow([pathSpan(path), { text: ` wrote ${size}`, style: LABEL }], width)];
};

export const editFileResult: ResultView = ({ value, args, width }) => {
  const path = str(value?.path);
  if (!path) return undefined;
  const before = str(args?.old_string);
  const after = str(args?.new_string);
  const spans: Span[] = [pathSpan(path)];
  if (before !== undefined && after !== undefined) {
    const { added, removed } = diffCount(before, after);
    spans.push({ text: " " }, { text: `+${added}`, style: ROLE.received });
    spans.push({ text: " " }, { text: `${GLYPH.minus}${removed}`, style: ROLE.error });
  }
  return [leadRow(spans, width)];
};

/** Lines added and removed by replacing `before` with `after`. */
export function diffCount(before: string, after: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of lineDiff(before, after, Number.MAX_SAFE_INTEGER)) {
    if (line.startsWith("+ ")) added++;
    else if (line.startsWith("- ")) removed++;
  }
  return { added, removed };
}

export const globResult: ResultView = ({ value, width }) => {
  if (!Array.isArray(value?.files)) return undefined;
  const more = value.truncated === true ? "+" : "";
  return [leadRow([{ text: `${plural(value.files.length, "file")}${more}`, style: LABEL }], width)];
};

export const grepResult: ResultView = ({ value, width }) => {
  if (!Array.isArray(value?.matches)) return undefined;
  const files = new Set(
    value.matches.map((m) => (m && typeof m === "object" ? (m as { file?: unknown }).file : "")),
  ).size;
  const more = value.truncated === true ? "+" : "";
  const text = `${plural(value.matches.length, "match", "matches")}${more} in ${plural(files, "file")}`;
  return [leadRow([{ text, style: LABEL }], width)];
};
