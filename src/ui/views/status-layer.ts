// The status layer (one line per agent a fan-in wait is waiting on) and the spinner line that
// says what the viewed agent is doing while it is busy.
import type { AgentRow, WaitStatusEntry } from "../../agents/agents.sql.js";
import { formatDuration, shortId } from "../../text/format.js";
import {
  agentLabel,
  agoText,
  callsText,
  doingText,
  msSince,
  nameText,
  tokenText,
  tokensOf,
} from "./agent-text.js";
import { approvalMark, type ApprovalMarks } from "./approvals.js";
import { clipRow, type Row } from "./spans.js";
import { displayWidth, padToWidth } from "./text-width.js";
import { GLYPH, SPINNER_FRAMES } from "./glyphs.js";
import { paintSpans, ROLE, type Line, type Style, type Theme } from "./theme.js";

const STATUS: Record<WaitStatusEntry["status"], { glyph: string; word: string; style: Style }> = {
  running: { glyph: GLYPH.running, word: "running", style: ROLE.awaited },
  received: { glyph: GLYPH.received, word: "received", style: ROLE.received },
  idle: { glyph: GLYPH.idle, word: "idle", style: ROLE.idle },
  dead: { glyph: GLYPH.dead, word: "dead", style: ROLE.dead },
};

/** Names are cut to this many columns in the status layer, so the columns line up. */
const NAME_COLS = 24;

/** One line per awaited agent, in the order of the wait's list; counters from the agent rows. */
export function renderStatusLayer(
  waitStatus: readonly WaitStatusEntry[],
  agentsById: ReadonlyMap<string, AgentRow>,
  now: number,
  width: number,
  theme: Theme,
  /** Open approval requests: an awaited agent that asks (or has descendants asking) says so. */
  approvals?: ApprovalMarks,
): Line[] {
  const details = waitStatus.map((entry) => {
    const agent = agentsById.get(entry.agent_id);
    if (!agent) return "";
    const parts = [
      callsText(agent.tool_calls),
      tokenText(tokensOf(agent)),
      agoText(msSince(agent.last_activity_at, now)),
    ];
    return `  ${parts.join(" · ")}`;
  });
  // Names give way to the counters on a narrow terminal (never below a few columns).
  const room = width - 13 - Math.max(0, ...details.map(displayWidth)) - 9;
  const nameCols = Math.max(6, Math.min(NAME_COLS, room));
  const labels = waitStatus.map((entry) => {
    const agent = agentsById.get(entry.agent_id);
    return agent
      ? agentLabel(agent, nameCols)
      : `${nameText(entry.name, nameCols)} ${shortId(entry.agent_id)}`;
  });
  // The name column is as wide as the longest name shown, so the counters line up.
  const column = Math.max(0, ...labels.map(displayWidth));
  return waitStatus.map((entry, i) => {
    const status = STATUS[entry.status] ?? STATUS.running;
    const row: Row = [
      { text: "  " },
      { text: `${status.glyph} ${status.word.padEnd(8)}`, style: status.style },
      { text: " " },
      { text: padToWidth(labels[i]!, column), style: ROLE.strong },
      ...approvalMark(approvals, entry.agent_id),
      { text: details[i]!, style: ROLE.faint },
    ];
    return paintSpans(theme, clipRow(row, width));
  });
}

/**
 * The busy line: a spinner glyph (by `frame`), what the agent is doing, how long it has been busy.
 * Empty when the agent is idle or dead.
 */
export function renderSpinner(
  agent: AgentRow,
  frame: number,
  width: number,
  theme: Theme,
  now: number = Date.now(),
): Line {
  if (agent.state !== "running" && agent.state !== "waiting") return "";
  // A quarter turn every other frame (the app ticks every 100 ms).
  const glyph = SPINNER_FRAMES[Math.abs(Math.floor(frame / 2)) % SPINNER_FRAMES.length]!;
  const since = agent.busy_since ?? agent.last_activity_at;
  const elapsed = formatDuration(msSince(since, now));
  const row: Row = [
    { text: `${glyph} `, style: ROLE.busyGlyph },
    { text: doingText(agent), style: ROLE.busy },
    { text: ` ${GLYPH.dot} ${elapsed} ${GLYPH.dot} esc to interrupt`, style: ROLE.faint },
  ];
  return paintSpans(theme, clipRow(row, width));
}
