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
import { byAge } from "./navigation.js";
import { clipRow, type Row } from "./spans.js";
import { isQueued } from "../../feed/types.js";
import { displayWidth, padToWidth } from "./text-width.js";
import { GLYPH, SPINNER_FRAMES } from "./glyphs.js";
import { paintSpans, ROLE, type Line, type Style, type Theme } from "./theme.js";

const STATUS: Record<
  WaitStatusEntry["status"] | "queued",
  { glyph: string; word: string; style: Style }
> = {
  running: { glyph: GLYPH.running, word: "running", style: ROLE.awaited },
  // A running agent waiting for a slot of a capped model server (runtime/model-cap.ts).
  queued: { glyph: GLYPH.waiting, word: "queued", style: ROLE.awaited },
  received: { glyph: GLYPH.received, word: "received", style: ROLE.received },
  idle: { glyph: GLYPH.idle, word: "idle", style: ROLE.idle },
  failed: { glyph: GLYPH.warning, word: "failed", style: ROLE.failed },
  dead: { glyph: GLYPH.dead, word: "dead", style: ROLE.dead },
};

/** Names are cut to this many columns in the status layer, so the columns line up. */
const NAME_COLS = 24;

/**
 * Painted lines by what they show: a fan-in of 200 paints a line again only when its agent, its
 * status or its "ago" changed, not every child every frame. Emptied when full.
 */
const paintedLines = new Map<string, Line>();
const PAINTED_MAX = 4096;
/** Labels by agent row (a changed agent is a new row object): escaping names costs per frame. */
const labelsByRow = new WeakMap<AgentRow, { cols: number; label: string }>();

/**
 * One line per awaited agent, in the order of the wait's list; counters from the agent rows. With
 * `rows` (what the layer has room for) and more awaited agents than that, the first `rows - 1`
 * and a last line counting the rest by status: only what is shown is built.
 */
/**
 * The awaited agents in fork order (byAge), as the separator and the panel list them, whatever
 * order the wait named them in; agents not known here keep their place after the known ones.
 */
function inForkOrder(
  entries: readonly WaitStatusEntry[],
  agentsById: ReadonlyMap<string, AgentRow>,
): WaitStatusEntry[] {
  return entries
    .map((entry, at) => ({ entry, at, agent: agentsById.get(entry.agent_id) }))
    .sort((a, b) => {
      if (a.agent && b.agent) return byAge(a.agent, b.agent) || a.at - b.at;
      return a.agent ? -1 : b.agent ? 1 : a.at - b.at;
    })
    .map(({ entry }) => entry);
}

export function renderStatusLayer(
  waitStatus: readonly WaitStatusEntry[],
  agentsById: ReadonlyMap<string, AgentRow>,
  now: number,
  width: number,
  theme: Theme,
  /** Open approval requests: an awaited agent that asks (or has descendants asking) says so. */
  approvals?: ApprovalMarks,
  rows?: number,
): Line[] {
  const ordered = inForkOrder(waitStatus, agentsById);
  const folded = rows !== undefined && ordered.length > rows;
  const shown = folded ? ordered.slice(0, Math.max(0, rows - 1)) : ordered;
  const details = shown.map((entry) => {
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
  const labels = shown.map((entry) => {
    const agent = agentsById.get(entry.agent_id);
    return agent
      ? labelOf(agent, nameCols)
      : `${nameText(entry.name, nameCols)} ${shortId(entry.agent_id)}`;
  });
  // The name column is as wide as the longest name shown, so the counters line up.
  const column = Math.max(0, ...labels.map(displayWidth));
  const lines = shown.map((entry, i) => {
    const agent = agentsById.get(entry.agent_id);
    const shownStatus =
      entry.status === "running" && agent && isQueued(agent) ? "queued" : entry.status;
    const status = STATUS[shownStatus] ?? STATUS.running;
    const marks = approvalMark(approvals, entry.agent_id);
    const key = [
      shownStatus,
      labels[i],
      column,
      details[i],
      ...marks.map((m) => m.text),
      width,
      theme.color,
      theme.ascii,
    ].join("\u0000");
    const known = paintedLines.get(key);
    if (known !== undefined) return known;
    const row: Row = [
      { text: "  " },
      { text: `${status.glyph} ${status.word.padEnd(8)}`, style: status.style },
      { text: " " },
      { text: padToWidth(labels[i]!, column), style: ROLE.strong },
      ...marks,
      { text: details[i]!, style: ROLE.faint },
    ];
    const line = paintSpans(theme, clipRow(row, width));
    if (paintedLines.size >= PAINTED_MAX) paintedLines.clear();
    paintedLines.set(key, line);
    return line;
  });
  if (folded) lines.push(restLine(waitStatus.slice(shown.length), width, theme));
  return lines;
}

function labelOf(agent: AgentRow, cols: number): string {
  const known = labelsByRow.get(agent);
  if (known?.cols === cols) return known.label;
  const label = agentLabel(agent, cols);
  labelsByRow.set(agent, { cols, label });
  return label;
}

/** "  … 185 more: 150 running · 35 received" — the awaited agents the layer has no room for. */
function restLine(rest: readonly WaitStatusEntry[], width: number, theme: Theme): Line {
  const counts = new Map<WaitStatusEntry["status"], number>();
  for (const entry of rest) counts.set(entry.status, (counts.get(entry.status) ?? 0) + 1);
  const parts = (Object.keys(STATUS) as WaitStatusEntry["status"][])
    .filter((status) => counts.has(status))
    .map((status) => `${counts.get(status)} ${STATUS[status].word}`);
  const row: Row = [
    { text: "  " },
    {
      text: `${GLYPH.ellipsis} ${rest.length} more: ${parts.join(` ${GLYPH.dot} `)}`,
      style: ROLE.faint,
    },
  ];
  return paintSpans(theme, clipRow(row, width));
}

/**
 * The busy line: a spinner glyph (by `frame`), what the agent is doing, how long it has been busy.
 * Empty when the agent is idle or dead.
 */
/** The spinner's glyph at a frame: a quarter turn every other frame (the app ticks every 100 ms). */
export function spinnerGlyph(frame: number): string {
  return SPINNER_FRAMES[Math.abs(Math.floor(frame / 2)) % SPINNER_FRAMES.length]!;
}

export function renderSpinner(
  agent: AgentRow,
  frame: number,
  width: number,
  theme: Theme,
  now: number = Date.now(),
): Line {
  if (agent.state !== "running" && agent.state !== "waiting") return "";
  const glyph = spinnerGlyph(frame);
  const since = agent.busy_since ?? agent.last_activity_at;
  const elapsed = formatDuration(msSince(since, now));
  const row: Row = [
    { text: `${glyph} `, style: ROLE.busyGlyph },
    { text: doingText(agent), style: ROLE.busy },
    { text: ` ${GLYPH.dot} ${elapsed} ${GLYPH.dot} esc to interrupt`, style: ROLE.faint },
  ];
  return paintSpans(theme, clipRow(row, width));
}
