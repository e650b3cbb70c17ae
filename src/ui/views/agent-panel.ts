// The agent panel: every agent of the tree as an indented tree (children under parents, oldest
// first) with its state, what it is doing, model, tokens, tool calls and time since its last
// activity; a running agent silent for over a minute stands out. Reaped agents are left out.
import type { AgentRow } from "../../agents/agents.sql.js";
import { formatDuration } from "../../cli/format.js";
import {
  agentLabel,
  callsText,
  doingText,
  msSince,
  SILENT_MS,
  STATE_GLYPH,
  tokenText,
  tokensOf,
} from "./agent-text.js";
import { byAge } from "./navigation.js";
import { clipRow, rowWidth, type Row } from "./spans.js";
import { padToWidth, truncateToWidth } from "./text-width.js";
import { cleanText, paintSpans, type Line, type Theme } from "./theme.js";

export interface AgentPanel {
  /** At most `height` lines: the window of the tree that holds the selected agent. */
  lines: Line[];
  /** Every listed agent's id, top to bottom (for moving the selection and Enter). */
  order: string[];
}

/** The listed agents top to bottom, with their depth in the shown tree. */
export function panelOrder(agents: readonly AgentRow[]): { agent: AgentRow; depth: number }[] {
  const listed = agents.filter((a) => a.reaped_at === null || a.reaped_at === undefined);
  const byId = new Map(listed.map((a) => [a.id, a]));
  const all = new Map(agents.map((a) => [a.id, a]));
  // An agent whose parent is not listed hangs under its nearest listed ancestor (or at the top).
  const shownParent = (a: AgentRow): string | undefined => {
    const seen = new Set<string>([a.id]);
    let p = a.parent_id ? all.get(a.parent_id) : undefined;
    while (p && !byId.has(p.id) && !seen.has(p.id)) {
      seen.add(p.id);
      p = p.parent_id ? all.get(p.parent_id) : undefined;
    }
    return p && byId.has(p.id) ? p.id : undefined;
  };
  const children = new Map<string | undefined, AgentRow[]>();
  for (const a of [...listed].sort(byAge)) {
    const key = shownParent(a);
    children.set(key, [...(children.get(key) ?? []), a]);
  }
  const out: { agent: AgentRow; depth: number }[] = [];
  const visit = (parent: string | undefined, depth: number): void => {
    for (const a of children.get(parent) ?? []) {
      out.push({ agent: a, depth });
      visit(a.id, depth + 1);
    }
  };
  visit(undefined, 0);
  return out;
}

export function renderAgentPanel(
  agents: readonly AgentRow[],
  selectedId: string,
  now: number,
  width: number,
  height: number,
  theme: Theme,
): AgentPanel {
  const rows = panelOrder(agents);
  const order = rows.map((r) => r.agent.id);
  const rowsShown = Math.max(0, height);
  const selected = Math.max(0, order.indexOf(selectedId));
  // Keep the selection visible, about in the middle when the tree is taller than the panel.
  const start = Math.max(
    0,
    Math.min(selected - Math.floor(rowsShown / 2), rows.length - rowsShown),
  );
  const lines = rows
    .slice(start, start + rowsShown)
    .map(({ agent, depth }) => panelLine(agent, depth, agent.id === selectedId, now, width, theme));
  return { lines, order };
}

function panelLine(
  agent: AgentRow,
  depth: number,
  selected: boolean,
  now: number,
  width: number,
  theme: Theme,
): Line {
  const state = STATE_GLYPH[agent.state] ?? STATE_GLYPH.idle;
  const idle = msSince(agent.last_activity_at, now);
  const silent = agent.state === "running" && idle > SILENT_MS;
  const left: Row = [
    { text: selected ? "›" : " ", style: { bold: true } },
    { text: " ".repeat(1 + 2 * Math.min(depth, 12)) },
    { text: `${state.glyph} `, style: state.style },
    { text: agentLabel(agent, 24), style: { bold: selected || agent.state !== "dead" } },
  ];
  const details: Row = [
    ...(agent.model ? [{ text: `${cleanText(agent.model, false)} · `, style: { dim: true } }] : []),
    {
      text: `${tokenText(tokensOf(agent))} · ${callsText(agent.tool_calls)} · `,
      style: { dim: true },
    },
    silent
      ? { text: `! ${formatDuration(idle)} silent`, style: { fg: "yellow" as const, bold: true } }
      : { text: formatDuration(idle), style: { dim: true } },
  ];
  const doing = doingText(agent);
  const doingStyle =
    agent.state === "dead"
      ? { fg: "red" as const }
      : agent.state === "idle"
        ? { dim: true }
        : { fg: "cyan" as const };
  // Room for what it is doing between the name and the details; the details go first when narrow.
  let right = details;
  let room = width - rowWidth(left) - rowWidth(right) - 4;
  if (room < 8) {
    right = [details[details.length - 1]!];
    room = width - rowWidth(left) - rowWidth(right) - 4;
  }
  const middle: Row =
    room >= 4 ? [{ text: "  " }, { text: truncateToWidth(doing, room), style: doingStyle }] : [];
  const used = rowWidth(left) + rowWidth(middle);
  const gap = width - used - rowWidth(right);
  let row: Row =
    gap >= 2 ? [...left, ...middle, { text: " ".repeat(gap) }, ...right] : [...left, ...middle];
  row = clipRow(row, width);
  if (!selected) return paintSpans(theme, row);
  // The selected row is drawn inverse across the whole width.
  const padded: Row = [...row, { text: padToWidth("", width - rowWidth(row)) }];
  return paintSpans(
    theme,
    padded.map((s) => ({ text: s.text, style: { ...s.style, inverse: true } })),
  );
}
