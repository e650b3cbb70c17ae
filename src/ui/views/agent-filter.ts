// Finding agents fast: the panel's filter (every typed word must appear in the agent's name, id,
// state or what it is doing), and which agents need the person — an approval request, an error,
// or a turn finished since the person last looked — with the next of them after the viewed one.
import type { AgentRow } from "../../agents/agents.sql.js";
import type { EventRow } from "../../agents/events.sql.js";
import { panelOrder } from "./agent-panel.js";
import { doingText } from "./agent-text.js";
import { NEEDS_APPROVAL, type ApprovalMarks } from "./approvals.js";
import { GLYPH } from "./glyphs.js";
import { cleanText } from "./theme.js";

/** The agents whose name, id, state or activity holds every word of `filter` (any case). */
export function filterAgents<A extends Pick<AgentRow, "id" | "name" | "state" | "activity">>(
  agents: readonly A[],
  filter: string,
): readonly A[] {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  // The same list, not a copy: the panel's order is kept per list (agent-panel.ts).
  if (words.length === 0) return agents;
  return agents.filter((agent) => {
    const text = [agent.name, agent.id, agent.state, agent.activity ?? "", doingText(agent)]
      .join(" ")
      .toLowerCase();
    return words.every((word) => text.includes(word));
  });
}

/** The panel title's part after "agents": its keys, and the filter while one is typed. */
export function panelKeys(filter: string): string {
  const { dash, dot } = GLYPH;
  if (!filter) return ` ${dash} ↑↓ select ${dot} Enter go ${dot} Esc close ${dot} type to filter `;
  const shown = cleanText(filter, false);
  return ` ${dash} filter: ${shown}${GLYPH.cursor} ${dot} ↑↓ select ${dot} Enter go ${dot} Esc clears `;
}

export type Need = "approval" | "error" | "finished";

export const NEED_TEXT: Record<Need, string> = {
  approval: "needs approval",
  error: "failed",
  finished: "finished",
};

/**
 * Notes what a feed update says about an agent the person is not viewing: an `error` event, or a
 * turn that ended (running or waiting → idle, or idle with more turns than the last row had). An
 * error stays an error until the agent is viewed.
 */
export function noteNeed(
  needs: Map<string, Exclude<Need, "approval">>,
  currentId: string,
  update: { event: EventRow } | { before: AgentRow | undefined; after: AgentRow },
): void {
  if ("event" in update) {
    const { agent_id, kind } = update.event;
    if (kind === "error" && agent_id !== currentId) needs.set(agent_id, "error");
    return;
  }
  const { before, after } = update;
  if (after.id === currentId || needs.get(after.id) === "error") return;
  const wasBusy = before?.state === "running" || before?.state === "waiting";
  // Rows are read after coalesced hints: a whole turn (or a new agent's first) may fall between
  // two rows, and then only the turn counter tells.
  const turned = after.turns > (before?.turns ?? 0);
  if (after.state === "idle" && (wasBusy || turned)) needs.set(after.id, "finished");
}

/** What `agent` needs of the person now, if anything (an open approval request first). */
export function needOf(
  agent: Pick<AgentRow, "id" | "activity">,
  needs: ReadonlyMap<string, Exclude<Need, "approval">>,
  approvals?: ApprovalMarks,
): Need | undefined {
  if (approvals?.own.has(agent.id) || agent.activity?.startsWith(NEEDS_APPROVAL)) return "approval";
  return needs.get(agent.id);
}

/** The next agent after `currentId` in the panel's order (wrapping) that needs the person. */
export function nextNeeding(
  agents: readonly AgentRow[],
  currentId: string,
  needs: ReadonlyMap<string, Exclude<Need, "approval">>,
  approvals?: ApprovalMarks,
): { agent: AgentRow; need: Need } | undefined {
  const order = panelOrder(agents).map((row) => row.agent);
  const at = order.findIndex((a) => a.id === currentId);
  for (let step = 1; step <= order.length; step++) {
    const agent = order[(at + step) % order.length]!;
    if (agent.id === currentId) continue;
    const need = needOf(agent, needs, approvals);
    if (need) return { agent, need };
  }
  return undefined;
}
