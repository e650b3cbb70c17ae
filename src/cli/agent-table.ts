// Rows → lines for `warren ls`: agents in tree order (parents before children, oldest first),
// drawn as an indented tree with state and counters.
import type { AgentRow, AgentState } from "../agents/agents.sql.js";
import { formatUsd } from "../agents/cost.js";
import type { TreeTotals } from "../agents/totals.js";
import { isQueued } from "../feed/types.js";
import {
  compactNumber,
  formatAgo,
  formatDuration,
  padEnd,
  padStart,
  shortId,
  shownName,
  type Colors,
} from "../text/format.js";

export interface TreeEntry {
  agent: AgentRow;
  /** 0 for the root (or an agent whose parent is not listed). */
  level: number;
  /** Box-drawing prefix showing the agent's place in the tree, e.g. "│  └─ ". */
  branch: string;
}

/** Depth-first, children oldest first; agents whose parent is missing are listed at the top level. */
export function treeOrder(list: AgentRow[]): TreeEntry[] {
  const ids = new Set(list.map((a) => a.id));
  const children = new Map<string | null, AgentRow[]>();
  for (const agent of list) {
    const parent = agent.parent_id && ids.has(agent.parent_id) ? agent.parent_id : null;
    children.set(parent, [...(children.get(parent) ?? []), agent]);
  }
  const out: TreeEntry[] = [];
  const visit = (agent: AgentRow, level: number, indent: string, last: boolean) => {
    const branch = level === 0 ? "" : `${indent}${last ? "└─ " : "├─ "}`;
    out.push({ agent, level, branch });
    const kids = children.get(agent.id) ?? [];
    const childIndent = level === 0 ? "" : `${indent}${last ? "   " : "│  "}`;
    kids.forEach((kid, i) => visit(kid, level + 1, childIndent, i === kids.length - 1));
  };
  for (const top of children.get(null) ?? []) visit(top, 0, "", true);
  return out;
}

export function paintState(state: AgentState, color: Colors): (text: string) => string {
  switch (state) {
    case "running":
      return color.green;
    case "waiting":
      return color.yellow;
    case "idle":
      return color.cyan;
    case "dead":
      return color.red;
  }
}

/**
 * The state a person reads: `failed` for an idle agent whose last turn failed (its `failure`, kept
 * until its next turn starts), else its state.
 */
export function shownState(agent: AgentRow): AgentState | "failed" {
  return agent.state === "idle" && typeof agent.failure === "string" ? "failed" : agent.state;
}

/** One line summing up a tree: "tree 1234abcd · 3 agents: 1 running, 2 idle". */
export function treeSummary(root: AgentRow, list: AgentRow[], color: Colors): string {
  const counts = new Map<string, number>();
  for (const agent of list) {
    const state = shownState(agent);
    counts.set(state, (counts.get(state) ?? 0) + 1);
  }
  const parts = ["running", "waiting", "idle", "failed", "dead"]
    .filter((state) => counts.has(state))
    .map((state) => `${counts.get(state)} ${state}`);
  const n = list.length;
  return `${color.bold(`tree ${shortId(root.id)}`)} · ${n} agent${n === 1 ? "" : "s"}: ${parts.join(", ")}`;
}

/**
 * The tree's total under the table: "total: 7 turns · 12 tool calls · tokens 40.2k in (12k cached) ·
 * 1.3k out (800 reasoning)"; `reaped` names how many reaped agents the totals include.
 */
export function totalsLine(
  totals: TreeTotals,
  reaped: number,
  color: Colors,
  /** The tree's cost in USD, when a price is known (then "· cost $0.0123" ends the line). */
  costUsd?: number,
): string {
  const label = reaped > 0 ? `total incl. ${reaped} reaped` : "total";
  return [
    `${color.bold(label)}: ${counted(totals.turns, "turn")}`,
    counted(totals.tool_calls, "tool call"),
    `tokens ${compactNumber(totals.input_tokens)} in (${compactNumber(totals.cached_tokens)} cached)`,
    `${compactNumber(totals.output_tokens)} out (${compactNumber(totals.reasoning_tokens)} reasoning)`,
    ...(costUsd === undefined ? [] : [`cost ${formatUsd(costUsd)}`]),
  ].join(" · ");
}

/** "1 turn", "2 turns". */
function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

const HEADERS = ["AGENT", "STATE", "TURNS", "TOOLS", "TOKENS IN/OUT", "AGE", "ACTIVE"];

/**
 * The table under the summary: one row per agent, the AGENT column indented as a tree; a COST
 * column when `costOf` knows the cost of any listed agent (empty for those it does not).
 */
export function renderAgentTable(
  list: AgentRow[],
  color: Colors,
  now = Date.now(),
  costOf: (agent: AgentRow) => number | undefined = () => undefined,
): string[] {
  const priced = list.some((agent) => costOf(agent) !== undefined);
  const headers = priced ? [...HEADERS, "COST"] : HEADERS;
  const rows = treeOrder(list).map(({ agent, branch }) => {
    const cost = costOf(agent);
    const reaped = agent.reaped_at ? " (reaped)" : "";
    return {
      agent,
      cells: [
        `${branch}${shownName(agent)}`,
        (isQueued(agent) ? "queued" : shownState(agent)) + reaped,
        String(agent.turns),
        String(agent.tool_calls),
        `${compactNumber(agent.input_tokens)}/${compactNumber(agent.output_tokens)}`,
        formatDuration(now - agent.created_at.getTime()),
        formatAgo(agent.last_activity_at, now),
        ...(priced ? [cost === undefined ? "" : formatUsd(cost)] : []),
      ],
    };
  });
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => row.cells[i]!.length)),
  );
  // Names and states read left-aligned; numbers and times right-aligned.
  const align = (text: string, i: number) =>
    i < 2 ? padEnd(text, widths[i]!) : padStart(text, widths[i]!);
  const line = (cells: string[]) => cells.join("  ").trimEnd();
  const header = color.dim(line(headers.map(align)));
  return [
    header,
    ...rows.map(({ agent, cells }) =>
      line(
        cells.map((cell, i) => {
          const padded = align(cell, i);
          if (i === 1) {
            return shownState(agent) === "failed"
              ? color.red(padded)
              : paintState(agent.state, color)(padded);
          }
          return i === 0 && agent.state === "dead" ? color.dim(padded) : padded;
        }),
      ),
    ),
  ];
}
