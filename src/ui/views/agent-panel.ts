// The agent panel: every agent of the tree as an indented tree (children under parents, oldest
// first) with its state, what it is doing, model, tokens, tool calls and time since its last
// activity; a running agent silent for over a minute stands out. Reaped agents are left out.
import type { AgentRow } from "../../agents/agents.sql.js";
import { formatUsd } from "../../agents/cost.js";
import { describeChanges } from "../../agents/worktree.js";
import { formatDuration } from "../../text/format.js";
import {
  agentLabel,
  callsText,
  doingText,
  msSince,
  SILENT_MS,
  isFailed,
  stateGlyph,
  tokenText,
  tokensOf,
} from "./agent-text.js";
import { approvalMark, NEEDS_APPROVAL, type ApprovalMarks } from "./approvals.js";
import { byAge } from "./navigation.js";
import { clipRow, rowWidth, type Row } from "./spans.js";
import { displayWidth, padToWidth, truncateToWidth } from "./text-width.js";
import { CORNER, GLYPH } from "./glyphs.js";
import {
  cleanText,
  paintSpans,
  ROLE,
  type Line,
  type Span,
  type Style,
  type Theme,
} from "./theme.js";

export interface AgentPanel {
  /** At most `height` lines: the window of the tree that holds the selected agent. */
  lines: Line[];
  /** Every listed agent's id, top to bottom (for moving the selection and Enter). */
  order: string[];
}

/**
 * The listed agents top to bottom, with their depth in the shown tree. Linear in the agents (after
 * one sort): the open panel calls it every frame, with a thousand agents in a big tree.
 */
export function panelOrder(agents: readonly AgentRow[]): { agent: AgentRow; depth: number }[] {
  const order = orderOf(agents);
  return order.index.map((i, k) => ({ agent: agents[i]!, depth: order.depth[k]! }));
}

/** The panel's order of a list: by position in the list, so rows replaced in place keep it. */
interface Order {
  /** Top to bottom: the listed agents' ids, */
  ids: string[];
  /** their positions in the list, */
  index: number[];
  /** and their depths in the shown tree. */
  depth: number[];
}

/**
 * Orders by list: the painter hands the panel the same list until an agent row changes (tree
 * version, tree-figures.ts), so frames between changes sort nothing. Lists are never mutated.
 */
const orders = new WeakMap<readonly AgentRow[], Order>();
/** The last list ordered: a new list of the same agents in the same places keeps its order. */
let lastOrdered: { agents: readonly AgentRow[]; order: Order } | undefined;

function orderOf(agents: readonly AgentRow[]): Order {
  let order = orders.get(agents);
  if (order) return order;
  // With 200 agents streaming, rows change (tokens, activity) many times a second while the tree's
  // shape stays: the order is sorted again only when an agent came, went, moved or was reaped.
  order =
    lastOrdered && sameShape(lastOrdered.agents, agents) ? lastOrdered.order : buildOrder(agents);
  orders.set(agents, order);
  lastOrdered = { agents, order };
  return order;
}

/** The same agents at the same places, with the same parents, ages and reaping. */
function sameShape(before: readonly AgentRow[], after: readonly AgentRow[]): boolean {
  if (before.length !== after.length) return false;
  for (let i = 0; i < after.length; i++) {
    const a = before[i]!;
    const b = after[i]!;
    if (a === b) continue;
    if (
      a.id !== b.id ||
      a.parent_id !== b.parent_id ||
      !sameTime(a.created_at, b.created_at) ||
      !sameTime(a.reaped_at, b.reaped_at)
    ) {
      return false;
    }
  }
  return true;
}

function sameTime(a: Date | string | null | undefined, b: Date | string | null | undefined) {
  if (a === b) return true;
  if (a === null || a === undefined || b === null || b === undefined) return false;
  return new Date(a).getTime() === new Date(b).getTime();
}

function buildOrder(agents: readonly AgentRow[]): Order {
  const isListed = (a: AgentRow) => a.reaped_at === null || a.reaped_at === undefined;
  const all = new Map<string, AgentRow>();
  const position = new Map<AgentRow, number>();
  agents.forEach((a, i) => {
    all.set(a.id, a);
    position.set(a, i);
  });
  // An agent whose parent is not listed hangs under its nearest listed ancestor (or at the top).
  const shownParent = (a: AgentRow): string | undefined => {
    let p = a.parent_id ? all.get(a.parent_id) : undefined;
    if (!p || isListed(p)) return p?.id;
    const seen = new Set<string>([a.id]);
    while (p && !isListed(p) && !seen.has(p.id)) {
      seen.add(p.id);
      p = p.parent_id ? all.get(p.parent_id) : undefined;
    }
    return p && isListed(p) ? p.id : undefined;
  };
  const children = new Map<string | undefined, AgentRow[]>();
  for (const a of agents.filter(isListed).sort(byAge)) {
    const key = shownParent(a);
    const siblings = children.get(key);
    if (siblings) siblings.push(a);
    else children.set(key, [a]);
  }
  const out: Order = { ids: [], index: [], depth: [] };
  const visit = (parent: string | undefined, depth: number): void => {
    for (const a of children.get(parent) ?? []) {
      out.ids.push(a.id);
      out.index.push(position.get(a)!);
      out.depth.push(depth);
      visit(a.id, depth + 1);
    }
  };
  visit(undefined, 0);
  return out;
}

/**
 * The panel's lines for `width`×`height` columns and rows; with a `title`, inside a frame that
 * carries it (two more columns and rows: the frame is drawn here, with the glyph table's lines).
 */
export function renderAgentPanel(
  agents: readonly AgentRow[],
  selectedId: string,
  now: number,
  width: number,
  height: number,
  theme: Theme,
  title?: string,
  /** Open approval requests: `? needs approval` on the asking agent, `?N` on its ancestors. */
  approvals?: ApprovalMarks,
  /** An agent's cost in USD, shown beside its tokens; undefined (no price): tokens only. */
  costOf?: (agent: AgentRow) => number | undefined,
): AgentPanel {
  const { ids: order, index, depth } = orderOf(agents);
  const rowsShown = Math.max(0, height);
  const selected = Math.max(0, order.indexOf(selectedId));
  // Keep the selection visible, about in the middle when the tree is taller than the panel.
  const start = Math.max(
    0,
    Math.min(selected - Math.floor(rowsShown / 2), order.length - rowsShown),
  );
  // Only the window is built; a row is built again only when what it shows changed.
  const shown: Row[] = [];
  for (let k = start; k < Math.min(order.length, start + rowsShown); k++) {
    const agent = agents[index[k]!]!;
    const view = { depth: depth[k]!, selected: agent.id === selectedId, now, width, approvals };
    shown.push(cachedRow(agent, { ...view, costUsd: costOf?.(agent) }));
  }
  if (title === undefined) {
    return { lines: shown.map((row) => paintedRow(row, theme, width, false)), order };
  }
  const [top, ...inside] = framed([], title, width, rowsShown);
  const bottom = inside.pop()!;
  const lines = [paintSpans(theme, top!)];
  for (let i = 0; i < rowsShown; i++) {
    const row = shown[i];
    lines.push(row ? paintedRow(row, theme, width, true) : paintSpans(theme, inside[i]!));
  }
  lines.push(paintSpans(theme, bottom));
  return { lines, order };
}

/**
 * A built row as a line (inside the frame's sides when `framed`), kept with the row: a frame paints
 * again only the rows whose agent or selection changed, not the whole window.
 */
const paintedRows = new WeakMap<Row, { key: string; line: Line }>();

function paintedRow(row: Row, theme: Theme, width: number, inFrame: boolean): Line {
  const key = `${theme.color} ${width} ${inFrame}`;
  const known = paintedRows.get(row);
  if (known?.key === key) return known.line;
  const line = paintSpans(theme, inFrame ? framed([row], "", width, 1)[1]! : row);
  paintedRows.set(row, { key, line });
  return line;
}

/** `rows` inside a frame `width`×`height` (inside measures) with `title` in its top edge. */
export function framed(rows: Row[], title: string, width: number, height: number): Row[] {
  const label = truncateToWidth(title, Math.max(0, width - 1));
  const rule = (n: number) => GLYPH.rule.repeat(Math.max(0, n));
  const bar: Span = { text: GLYPH.bar };
  const inside: Row[] = [];
  for (let i = 0; i < height; i++) {
    const row = rows[i] ?? [];
    inside.push([bar, ...row, { text: " ".repeat(Math.max(0, width - rowWidth(row))) }, bar]);
  }
  return [
    [
      {
        text: `${CORNER.topLeft}${rule(1)}${label}${rule(width - 1 - displayWidth(label))}${CORNER.topRight}`,
      },
    ],
    ...inside,
    [{ text: `${CORNER.bottomLeft}${rule(width)}${CORNER.bottomRight}` }],
  ];
}

/** What an agent's row shows besides the agent: its place, the clock, the width, its marks. */
interface RowView {
  depth: number;
  selected: boolean;
  now: number;
  width: number;
  approvals: ApprovalMarks | undefined;
  costUsd: number | undefined;
}

/** Built rows by agent row (a changed agent is a new row object) and what else they show. */
const builtRows = new WeakMap<AgentRow, { key: string; row: Row }>();

function cachedRow(agent: AgentRow, view: RowView): Row {
  const { depth, selected, now, width, approvals, costUsd } = view;
  const idle = msSince(agent.last_activity_at, now);
  const key = [
    depth,
    selected,
    width,
    formatDuration(idle),
    idle > SILENT_MS,
    approvals?.own.has(agent.id) ?? false,
    approvals?.below.get(agent.id) ?? 0,
    costUsd,
  ].join(" ");
  const known = builtRows.get(agent);
  if (known?.key === key) return known.row;
  const row = panelRow(agent, view);
  builtRows.set(agent, { key, row });
  return row;
}

function panelRow(agent: AgentRow, view: RowView): Row {
  const { depth, selected, now, width, approvals, costUsd } = view;
  const state = stateGlyph(agent);
  const idle = msSince(agent.last_activity_at, now);
  const silent = agent.state === "running" && idle > SILENT_MS;
  const left: Row = [
    { text: selected ? GLYPH.selected : " ", style: ROLE.strong },
    { text: " ".repeat(1 + 2 * Math.min(depth, 12)) },
    { text: `${state.glyph} `, style: state.style },
    { text: agentLabel(agent, 24), style: selected || agent.state !== "dead" ? ROLE.strong : {} },
    // An asking agent says so in its activity below; the mark counts the descendants asking.
    ...approvalMark(approvals, agent.id).filter((mark) => !mark.text.includes(NEEDS_APPROVAL)),
  ];
  const changes = agent.worktree && !agent.worktree.removed ? agent.worktree.changes : undefined;
  const details: Row = [
    ...(agent.model ? [{ text: `${cleanText(agent.model, false)} · `, style: ROLE.faint }] : []),
    // An isolated child's edits in its worktree, as last measured (worktree.ts recordChanges).
    ...(changes?.files ? [{ text: `${describeChanges(changes)} · `, style: ROLE.faint }] : []),
    {
      text: `${tokenText(tokensOf(agent))}${costUsd === undefined ? "" : ` ${formatUsd(costUsd)}`} · ${callsText(agent.tool_calls)} · `,
      style: ROLE.faint,
    },
    silent
      ? { text: `! ${formatDuration(idle)} silent`, style: ROLE.alarm }
      : { text: formatDuration(idle), style: ROLE.faint },
  ];
  const asking = approvals?.own.has(agent.id) ?? false;
  // The gate's activity names the request (`? needs approval 12: bash: …`); a row read before
  // it was written still says that the agent asks.
  const doing =
    asking && !doingText(agent).startsWith(NEEDS_APPROVAL) ? NEEDS_APPROVAL : doingText(agent);
  const doingStyle: Style = asking
    ? ROLE.alarm
    : agent.state === "dead"
      ? ROLE.dead
      : isFailed(agent)
        ? ROLE.failed
        : agent.state === "idle"
          ? ROLE.idle
          : ROLE.busy;
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
  if (!selected) return row;
  // The selected row is drawn inverse across the whole width.
  const padded: Row = [...row, { text: padToWidth("", width - rowWidth(row)) }];
  return padded.map((s) => ({ text: s.text, style: { ...s.style, inverse: true } }));
}
