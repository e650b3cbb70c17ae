// The search result list: one row per hit — agent, time, the matching line, in aligned columns — in the panel's
// frame, the selected row inverse; a line while the query runs, fails or finds nothing.
import type { SearchHit } from "../../search/search.js";
import { framed } from "./agent-panel.js";
import { nameText } from "./agent-text.js";
import { GLYPH } from "./glyphs.js";
import { clipRow, rowWidth, type Row } from "./spans.js";
import { displayWidth, padToWidth } from "./text-width.js";
import { cleanText, paintSpans, ROLE, type Line, type Theme } from "./theme.js";

export interface SearchResultsView {
  query: string;
  hits: readonly SearchHit[] | undefined;
  selected: number;
  error?: string;
}

/** The list's lines for `width`×`height` (inside the frame, which these lines draw). */
export function renderSearchResults(
  view: SearchResultsView,
  now: Date,
  width: number,
  height: number,
  theme: Theme,
): Line[] {
  const hits = view.hits ?? [];
  const count =
    view.hits === undefined ? "searching" : `${hits.length} match${hits.length === 1 ? "" : "es"}`;
  const { dot, dash } = GLYPH;
  const title = ` search ${cleanText(view.query, false)} ${dash} ${count} ${dot} ↑↓ select ${dot} Enter go ${dot} Esc close `;
  const rowsShown = Math.max(0, height);
  let rows: Row[];
  if (view.error !== undefined) {
    rows = [[{ text: ` ${cleanText(view.error, false)}`, style: ROLE.alarm }]];
  } else if (view.hits === undefined) {
    rows = [[{ text: ` searching${GLYPH.ellipsis}`, style: ROLE.faint }]];
  } else if (hits.length === 0) {
    rows = [[{ text: " no matches", style: ROLE.faint }]];
  } else {
    const selected = Math.max(0, Math.min(view.selected, hits.length - 1));
    const start = Math.max(
      0,
      Math.min(selected - Math.floor(rowsShown / 2), hits.length - rowsShown),
    );
    const shown = hits.slice(start, start + rowsShown);
    // Columns as wide as their widest shown cell, so the matching lines start in one column.
    const columns = {
      name: Math.max(...shown.map((hit) => displayWidth(nameText(hit.agent_name, MAX_NAME)))),
      time: Math.max(...shown.map((hit) => timeText(hit.created_at, now).length)),
    };
    rows = shown.map((hit, i) => hitRow(hit, start + i === selected, now, width, columns));
  }
  return framed(rows, title, width, rowsShown).map((row) => paintSpans(theme, row));
}

const MAX_NAME = 20;

function hitRow(
  hit: SearchHit,
  selected: boolean,
  now: Date,
  width: number,
  columns: { name: number; time: number },
): Row {
  const row = clipRow(
    [
      { text: selected ? GLYPH.selected : " ", style: ROLE.strong },
      { text: " " },
      { text: padToWidth(nameText(hit.agent_name, MAX_NAME), columns.name), style: ROLE.strong },
      { text: ` ${hit.agent_id.slice(0, 8)}  `, style: ROLE.faint },
      { text: `${timeText(hit.created_at, now).padEnd(columns.time)}  `, style: ROLE.faint },
      // Escaped by the query already (search.ts); cleanText again costs nothing and is certain.
      { text: cleanText(hit.line, false) },
    ],
    width,
  );
  if (!selected) return row;
  const padded: Row = [...row, { text: padToWidth("", width - rowWidth(row)) }];
  return padded.map((s) => ({ text: s.text, style: { ...s.style, inverse: true } }));
}

/** "21:30:05" today, "Nov 22 21:30" before. */
export function timeText(at: Date, now: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  const clock = `${two(at.getHours())}:${two(at.getMinutes())}`;
  if (at.toDateString() === now.toDateString()) return `${clock}:${two(at.getSeconds())}`;
  const month = at.toLocaleString("en", { month: "short" });
  return `${month} ${two(at.getDate())} ${clock}`;
}
