// Walking the agent tree with the keyboard (SPEC §4): parent, newest child, previous/next sibling
// (wrapping). Reaped agents are out of navigation; dead ones stay visitable until reaped.
import type { AgentRow } from "../../agents/agents.sql.js";

export type Direction = "parent" | "child" | "prev" | "next";

export interface NavInfo {
  parent?: AgentRow;
  prev?: AgentRow;
  current: AgentRow;
  next?: AgentRow;
  /** Visitable children. */
  children: number;
}

/**
 * Fork order, oldest first: the forks of one batch share created_at (one statement's time), so
 * their fork_seq (migration 0033, drawn as each row is inserted, in the model's call order) says
 * which came first; the id only breaks ties of rows read without it.
 */
export function byAge(a: AgentRow, b: AgentRow): number {
  const t = time(a.created_at) - time(b.created_at);
  if (t !== 0) return t;
  // Rows that came through JSON or raw SQL may carry the bigint as a string.
  const s = Number(a.fork_seq ?? 0) - Number(b.fork_seq ?? 0);
  return s !== 0 ? s : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function time(value: Date | string): number {
  return value instanceof Date ? value.getTime() : new Date(value).getTime();
}

const visitable = (a: AgentRow): boolean => a.reaped_at === null || a.reaped_at === undefined;

function childrenOf(agents: readonly AgentRow[], parentId: string): AgentRow[] {
  return agents.filter((a) => a.parent_id === parentId && visitable(a)).sort(byAge);
}

/** The agent to show after moving `dir` from `currentId`, or undefined when there is none. */
export function navigate(
  agents: readonly AgentRow[],
  currentId: string,
  dir: Direction,
): string | undefined {
  const current = agents.find((a) => a.id === currentId);
  if (!current) return undefined;
  switch (dir) {
    case "parent": {
      if (!current.parent_id) return undefined;
      const parent = agents.find((a) => a.id === current.parent_id);
      return parent && visitable(parent) ? parent.id : undefined;
    }
    case "child":
      return childrenOf(agents, current.id).at(-1)?.id;
    case "prev":
    case "next": {
      if (!current.parent_id) return undefined;
      const siblings = childrenOf(agents, current.parent_id);
      const at = siblings.findIndex((a) => a.id === current.id);
      if (siblings.length < 2 || at < 0) return undefined;
      const step = dir === "next" ? 1 : -1;
      return siblings[(at + step + siblings.length) % siblings.length]!.id;
    }
  }
}

/** What the separator shows around `currentId` (undefined when the agent is unknown). */
export function navInfo(agents: readonly AgentRow[], currentId: string): NavInfo | undefined {
  const current = agents.find((a) => a.id === currentId);
  if (!current) return undefined;
  const find = (id: string | undefined): AgentRow | undefined =>
    id === undefined ? undefined : agents.find((a) => a.id === id);
  return {
    parent: find(navigate(agents, currentId, "parent")),
    prev: find(navigate(agents, currentId, "prev")),
    current,
    next: find(navigate(agents, currentId, "next")),
    children: childrenOf(agents, current.id).length,
  };
}

/**
 * The agent itself when it is alive and not reaped, else its nearest such ancestor (where the view
 * moves after `/kill` or `/reap` of the agent shown). Undefined only when nothing above lives.
 */
export function nearestLivingAncestor(agents: readonly AgentRow[], id: string): string | undefined {
  const byId = new Map(agents.map((a) => [a.id, a]));
  const seen = new Set<string>();
  let at = byId.get(id);
  while (at && !seen.has(at.id)) {
    if (at.state !== "dead" && visitable(at)) return at.id;
    seen.add(at.id);
    at = at.parent_id ? byId.get(at.parent_id) : undefined;
  }
  return undefined;
}
