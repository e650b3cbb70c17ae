// bash's result as the output block a person reads in a terminal: its first and last lines when
// long ("… N lines …" between), "(no output)" when empty, and a dimmed `exit N` only when the
// command failed (or "timed out" / "interrupted").
import { GLYPH } from "../glyphs.js";
import { clipRow, type Row } from "../spans.js";
import { cleanText, ROLE } from "../theme.js";
import { INDENT, LABEL, LEAD, leadRow, num, str, type ResultView } from "./common.js";

/** Lines kept from the start and from the end of a long output. */
export const HEAD_LINES = 4;
export const TAIL_LINES = 3;

export const bashResult: ResultView = ({ value, width }) => {
  if (!value || !("output" in value)) return undefined;
  const output = (str(value.output) ?? "").replace(/\s+$/, "");
  const rows: Row[] = [];
  if (!output) rows.push(leadRow([{ text: "(no output)", style: LABEL }], width));
  else {
    const lines = output.split("\n");
    const shown =
      lines.length <= HEAD_LINES + TAIL_LINES + 1
        ? lines
        : [...lines.slice(0, HEAD_LINES), undefined, ...lines.slice(-TAIL_LINES)];
    const hidden = lines.length - HEAD_LINES - TAIL_LINES;
    shown.forEach((line, i) => {
      const lead = i === 0 ? LEAD : " ".repeat(INDENT);
      // Each line on one row, cut at the width: a long line never fills the screen.
      const body =
        line === undefined
          ? { text: `${GLYPH.ellipsis} ${hidden} lines ${GLYPH.ellipsis}`, style: LABEL }
          : { text: cleanText(line, false) };
      rows.push(clipRow([{ text: lead, style: ROLE.call }, body], width));
    });
  }
  const status = statusText(value);
  if (status)
    rows.push(clipRow([{ text: " ".repeat(INDENT) }, { text: status, style: LABEL }], width));
  return rows;
};

function statusText(value: Record<string, unknown>): string | undefined {
  if (value.timed_out === true) return "timed out";
  if (value.interrupted === true) return "interrupted";
  const code = num(value.exit_code);
  if (code !== undefined && code !== 0) return `exit ${code}`;
  const signal = str(value.exit_code);
  return signal ? `exit ${cleanText(signal, false)}` : undefined;
}
