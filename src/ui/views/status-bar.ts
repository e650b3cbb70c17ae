// The status bar: a connection problem first and loud, then the mode, the tree, the agent
// (name + short id, state, model, its tokens and the tree's), the counts of agents by state, and
// the keys hint at the right. Parts shorten, then drop, by priority when the terminal is narrow.
import type { AgentRow } from "../../agents/agents.sql.js";
import { sumCounters, type CounterRow } from "../../agents/totals.js";
import { formatUsd } from "../../agents/cost.js";
import { compactNumber, shortId } from "../../text/format.js";
import { agentLabel, nameText, STATE_GLYPH, tokenText } from "./agent-text.js";
import { approvalCountText } from "./approvals.js";
import { clipRow, rowWidth, type Row } from "./spans.js";
import { GLYPH } from "./glyphs.js";
import { cleanText, paintSpans, ROLE, type Line, type Theme } from "./theme.js";

export interface StatusBarInfo {
  root: AgentRow;
  current: AgentRow;
  counts: { running: number; waiting: number; idle: number; dead: number };
  /** Tokens (input + output) of the current agent. */
  tokens: number;
  /** The whole tree's tokens, shown beside the agent's: "1.2k tok · tree 40k (12k cached)". */
  tree?: { tokens: number; cached: number };
  /** USD of the agent and of the tree, each when its model has a price (else tokens only). */
  cost?: { agent?: number; tree?: number };
  mode: "normal" | "capture" | "dead";
  keysHint: string;
  /** Shown instead of `keysHint` when the bar is narrow. */
  keysHintShort?: string;
  /** E.g. "database unreachable — reconnecting…": shown first and prominently. */
  problem?: string;
  /** Open approval requests of the tree, and the key that jumps to the oldest. */
  approvals?: { count: number; key: string };
  /** The tree's task board, when it has tasks: "tasks 2/5" (done of all), held, blocked. */
  tasks?: TaskCounts;
}

/** What the status bar says of the task board. */
export interface TaskCounts {
  total: number;
  done: number;
  claimed: number;
  blocked: number;
  failed: number;
}

interface Part {
  row: Row;
  /** Lower goes first when space runs out. */
  priority: number;
  right?: boolean;
  /** Shown instead of `row`, from its own turn in the priority order, before the part goes. */
  short?: { row: Row; priority: number };
}

/** A model name in the narrow bar: its last path segment, at most this many cells. */
const SHORT_MODEL = 16;

export function renderStatusBar(info: StatusBarInfo, width: number, theme: Theme): Line {
  const { current, counts } = info;
  const state = STATE_GLYPH[current.state] ?? STATE_GLYPH.idle;
  const parts: Part[] = [];
  if (info.problem) {
    parts.push({
      row: [
        {
          text: ` ${GLYPH.warning} ${cleanText(info.problem, false)} `,
          style: ROLE.problemBadge,
        },
      ],
      priority: 100,
    });
  }
  if (info.approvals && info.approvals.count > 0) {
    parts.push({
      row: [
        { text: approvalCountText(info.approvals.count), style: ROLE.alarm },
        { text: ` ${info.approvals.key}`, style: ROLE.faint },
      ],
      priority: 95,
    });
  }
  if (info.tasks && info.tasks.total > 0) {
    const t = info.tasks;
    const extra = [
      t.claimed ? `${t.claimed} held` : "",
      t.failed ? `${t.failed} failed` : "",
      t.blocked ? `${t.blocked} blocked` : "",
    ].filter(Boolean);
    parts.push({
      row: [
        {
          text: `tasks ${t.done}/${t.total}${extra.length ? ` (${extra.join(", ")})` : ""}`,
          style: t.failed || t.blocked ? ROLE.alarm : undefined,
        },
      ],
      priority: 45,
      short: { row: [{ text: `tasks ${t.done}/${t.total}` }], priority: 27 },
    });
  }
  if (info.mode === "capture") {
    parts.push({
      row: [{ text: ` ${GLYPH.capture} CAPTURE `, style: ROLE.captureBadge }],
      priority: 90,
    });
  } else if (info.mode === "dead") {
    parts.push({
      row: [{ text: ` ${GLYPH.dead} DEAD `, style: ROLE.deadBadge }],
      priority: 90,
    });
  }
  parts.push({
    row: [{ text: `tree ${shortId(info.root.tree_id)}`, style: ROLE.faint }],
    priority: 20,
  });
  parts.push({ row: [{ text: agentLabel(current, 24), style: ROLE.strong }], priority: 80 });
  parts.push({
    row: [{ text: `${state.glyph} ${current.state}`, style: state.style }],
    priority: 70,
  });
  if (current.model) {
    const model = cleanText(current.model, false);
    const short = nameText(model.slice(model.lastIndexOf("/") + 1), SHORT_MODEL);
    parts.push({
      row: [{ text: model, style: ROLE.model }],
      priority: 30,
      ...(short === model
        ? {}
        : { short: { row: [{ text: short, style: ROLE.model }], priority: 25 } }),
    });
  }
  parts.push({
    row: [{ text: tokensPart(info) }],
    priority: 40,
    // The agent's own figures before none at all.
    ...(info.tree
      ? { short: { row: [{ text: tokensPart({ ...info, tree: undefined }) }], priority: 28 } }
      : {}),
  });
  parts.push({
    row: [{ text: cleanText(info.keysHint, false), style: ROLE.faint }],
    priority: 60,
    right: true,
    ...(info.keysHintShort
      ? { short: { row: [{ text: info.keysHintShort, style: ROLE.faint }], priority: 26 } }
      : {}),
  });
  parts.push({
    row: [
      { text: `${STATE_GLYPH.running.glyph}${counts.running}`, style: STATE_GLYPH.running.style },
      { text: " " },
      { text: `${STATE_GLYPH.waiting.glyph}${counts.waiting}`, style: STATE_GLYPH.waiting.style },
      { text: " " },
      { text: `${STATE_GLYPH.idle.glyph}${counts.idle}`, style: STATE_GLYPH.idle.style },
      { text: " " },
      { text: `${STATE_GLYPH.dead.glyph}${counts.dead}`, style: STATE_GLYPH.dead.style },
    ],
    priority: 50,
  });

  // Least important first, parts shorten (at their short form's priority) or go, until the rest
  // fits; then what is left is cut.
  const steps = parts.flatMap((part) => [
    ...(part.short ? [{ part, priority: part.short.priority, shorten: true }] : []),
    { part, priority: part.priority, shorten: false },
  ]);
  steps.sort((a, b) => a.priority - b.priority);
  const shown = new Map(parts.map((part) => [part, part]));
  for (const step of steps) {
    if (shown.size === 1 || barWidth([...shown.values()]) <= width) break;
    if (step.shorten) shown.set(step.part, { ...step.part, row: step.part.short!.row });
    else shown.delete(step.part);
  }
  const kept = [...shown.values()];
  return paintSpans(theme, clipRow(layout(kept, width), width));
}

/** The status bar's `tree` figures from the rows of the tree's agents. */
export function treeTokens(agents: Iterable<CounterRow>): { tokens: number; cached: number } {
  const totals = sumCounters(agents);
  return { tokens: totals.input_tokens + totals.output_tokens, cached: totals.cached_tokens };
}

/** The agent's tokens, then the tree's, with the cached input when the server reported any. */
function tokensPart(info: StatusBarInfo): string {
  const usd = (n: number | undefined) => (n === undefined ? "" : ` ${formatUsd(n)}`);
  const agent = `${tokenText(info.tokens)}${usd(info.cost?.agent)}`;
  if (!info.tree) return agent;
  const cached = info.tree.cached > 0 ? ` (${compactNumber(info.tree.cached)} cached)` : "";
  return `${agent} · tree ${compactNumber(info.tree.tokens)}${cached}${usd(info.cost?.tree)}`;
}

const GAP = ` ${GLYPH.bar} `;

function layout(parts: Part[], width: number): Row {
  const left = joinParts(parts.filter((p) => !p.right));
  const right = joinParts(parts.filter((p) => p.right));
  const fill = Math.max(1, width - rowWidth(left) - rowWidth(right));
  return right.length ? [...left, { text: " ".repeat(fill) }, ...right] : left;
}

function joinParts(parts: Part[]): Row {
  const row: Row = [];
  parts.forEach((p, i) => {
    if (i > 0) row.push({ text: GAP, style: ROLE.faint });
    row.push(...p.row);
  });
  return row;
}

function barWidth(parts: Part[]): number {
  const left = rowWidth(joinParts(parts.filter((p) => !p.right)));
  const right = rowWidth(joinParts(parts.filter((p) => p.right)));
  return left + (right ? right + 1 : 0);
}
