// Shared bits of how an agent is described in one line: name + short id (escaped), state glyphs,
// counters and "time since last activity".
import type { AgentRow, AgentState } from "../../agents/agents.sql.js";
import { compactNumber, formatDuration, shortId } from "../../text/format.js";
import { sliceToWidth, displayWidth } from "./text-width.js";
import { GLYPH } from "./glyphs.js";
import { cleanText, ROLE, type Style } from "./theme.js";

/** A running agent silent for longer than this stands out in the panel. */
export const SILENT_MS = 60_000;

export const STATE_GLYPH: Record<AgentState, { glyph: string; style: Style }> = {
  running: { glyph: GLYPH.running, style: ROLE.running },
  waiting: { glyph: GLYPH.waiting, style: ROLE.waiting },
  idle: { glyph: GLYPH.idle, style: ROLE.idle },
  dead: { glyph: GLYPH.dead, style: ROLE.dead },
};

type Failure = { failure?: string | null };

/** An idle agent whose last turn failed: shown `failed`, never `idle` (migration 0029). */
export function isFailed(agent: Pick<AgentRow, "state"> & Failure): boolean {
  return agent.state === "idle" && typeof agent.failure === "string";
}

/** The glyph of the agent's state, a failed one's instead of idle's. */
export function stateGlyph(agent: Pick<AgentRow, "state"> & Failure): {
  glyph: string;
  style: Style;
} {
  if (isFailed(agent)) return { glyph: GLYPH.warning, style: ROLE.failed };
  return STATE_GLYPH[agent.state] ?? STATE_GLYPH.idle;
}

/** The agent's name (control characters escaped; at most `maxName` columns) and its short id. */
export function agentLabel(agent: Pick<AgentRow, "id" | "name">, maxName = 64): string {
  return `${nameText(agent.name, maxName)} ${shortId(agent.id)}`;
}

export function nameText(name: string, maxName = 64): string {
  const clean = cleanText(name, false);
  if (displayWidth(clean) <= maxName) return clean;
  return `${sliceToWidth(clean, Math.max(0, maxName - 1))}…`;
}

export function tokensOf(agent: Pick<AgentRow, "input_tokens" | "output_tokens">): number {
  return Number(agent.input_tokens) + Number(agent.output_tokens);
}

export function tokenText(tokens: number): string {
  return `${compactNumber(tokens)} tok`;
}

export function callsText(calls: number): string {
  return `${calls} call${calls === 1 ? "" : "s"}`;
}

export function msSince(value: Date | string | null | undefined, now: number): number {
  if (value === null || value === undefined) return 0;
  const t = value instanceof Date ? value.getTime() : new Date(value).getTime();
  return Number.isFinite(t) ? Math.max(0, now - t) : 0;
}

/** "now", "12s ago", "5m ago". */
export function agoText(ms: number): string {
  return ms < 1000 ? "now" : `${formatDuration(ms)} ago`;
}

/** What the agent is doing, for a person (its `activity`, else a word for its state). */
export function doingText(agent: Pick<AgentRow, "state" | "activity"> & Failure): string {
  const activity = agent.activity?.trim();
  if (activity && (agent.state === "running" || agent.state === "waiting")) {
    return cleanText(activity, false);
  }
  switch (agent.state) {
    case "running":
      return "thinking";
    case "waiting":
      return "waiting";
    case "idle":
      return isFailed(agent) ? `failed: ${cleanText(agent.failure!, false)}` : "idle";
    case "dead":
      return "dead";
  }
}
