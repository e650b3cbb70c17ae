// What a frame shows about the whole tree — its rows as one list, the counts by state, the tree's
// tokens and cost, the approval marks, the separator's neighbours — derived once per tree version
// (the controller bumps it when an agent row changes), not once per frame: with 1,000 agents, a
// frame after a key or a spinner tick passes over none of them.
import type { AgentRow, AgentState } from "../agents/agents.sql.js";
import { agentCost, type Pricing } from "../agents/cost.js";
import type { PendingApproval } from "../approvals/approvals.js";
import type { TuiState } from "./controller.js";
import { approvalMarks, navInfo, type ApprovalMarks, type NavInfo } from "./views/index.js";

export interface TreeFigures {
  /** The agents not reaped, one list until the tree changes (the panel keeps its order by it). */
  agents: readonly AgentRow[];
  counts: Record<AgentState, number>;
  /** Tokens of every agent, reaped ones included (their tokens were spent). */
  tokens: { tokens: number; cached: number };
  /** USD of every priced agent, reaped ones included; undefined when none is priced. */
  cost: number | undefined;
}

/** The figures in one pass over the rows. */
export function treeFigures(
  agents: Iterable<AgentRow>,
  reaped: Iterable<AgentRow>,
  pricing?: Pricing,
): TreeFigures {
  const list = [...agents];
  const counts = { running: 0, waiting: 0, idle: 0, dead: 0 };
  let tokens = 0;
  let cached = 0;
  let cost: number | undefined;
  const add = (row: AgentRow) => {
    // Rows that came through JSON or raw SQL may carry bigints as strings.
    tokens += Number(row.input_tokens) + Number(row.output_tokens);
    cached += Number(row.cached_tokens);
    const usd = pricing && agentCost(row, pricing.prices, pricing.model);
    if (usd !== undefined) cost = (cost ?? 0) + usd;
  };
  for (const row of list) {
    counts[row.state]++;
    add(row);
  }
  for (const row of reaped) add(row);
  return { agents: list, counts, tokens: { tokens, cached }, cost };
}

export interface TreeFiguresCache {
  figures(): TreeFigures;
  /** The approval marks of the open requests (kept until the tree or the requests change). */
  marks(): ApprovalMarks;
  /** The separator's neighbours of the viewed agent. */
  nav(): NavInfo | undefined;
}

/** Figures of `state`'s tree, made again only when its tree version (or what else they use) moved. */
export function createTreeFigures(state: TuiState, pricing?: Pricing): TreeFiguresCache {
  let version = -1;
  let figures: TreeFigures | undefined;
  let marks: { approvals: readonly PendingApproval[]; value: ApprovalMarks } | undefined;
  let nav: { currentId: string; value: NavInfo | undefined } | undefined;
  const current = (): TreeFigures => {
    if (figures && version === state.treeVersion) return figures;
    version = state.treeVersion;
    marks = undefined;
    nav = undefined;
    return (figures = treeFigures(state.agents.values(), state.reaped.values(), pricing));
  };
  return {
    figures: current,
    marks() {
      const { agents } = current();
      if (marks?.approvals !== state.approvals) {
        marks = { approvals: state.approvals, value: approvalMarks(agents, state.approvals) };
      }
      return marks.value;
    },
    nav() {
      const { agents } = current();
      if (nav?.currentId !== state.currentId) {
        nav = { currentId: state.currentId, value: navInfo(agents, state.currentId) };
      }
      return nav.value;
    },
  };
}
