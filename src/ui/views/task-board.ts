// The task board (/tasks) in the panel's frame: one row per task — state, short id, title, who
// holds or finished it, its result or what it waits for — kept live by the TUI's task watch.
import type { TaskEntry, TaskShownState } from "../../tasks/board.js";
import { taskHolder, taskOutcome, taskSummary } from "../../tasks/render.js";
import { oneLine, shortId } from "../../text/format.js";
import { framed } from "./agent-panel.js";
import { GLYPH } from "./glyphs.js";
import { clipRow, type Row } from "./spans.js";
import { cleanText, paintSpans, ROLE, type Line, type Style, type Theme } from "./theme.js";

const STATE_STYLE: Record<TaskShownState, Style> = {
  pending: ROLE.idle,
  claimed: ROLE.running,
  done: ROLE.received,
  failed: ROLE.error,
  blocked: ROLE.alarm,
};

/** The board's lines for `width`×`height` (inside the frame, which these lines draw). */
export function renderTaskBoard(
  tasks: readonly TaskEntry[] | undefined,
  width: number,
  height: number,
  theme: Theme,
): Line[] {
  const { dot, dash } = GLYPH;
  const summary = tasks === undefined ? "loading" : taskSummary(tasks);
  const title = ` tasks ${dash} ${summary} ${dot} live ${dot} Esc close `;
  let rows: Row[];
  if (tasks === undefined) rows = [[{ text: ` loading${GLYPH.ellipsis}`, style: ROLE.faint }]];
  else if (tasks.length === 0) {
    rows = [[{ text: " no tasks yet: agents add them with task_add", style: ROLE.faint }]];
  } else {
    // The open ones first (held, then ready or waiting), the finished after, so a long board
    // shows what is moving.
    const order: TaskShownState[] = ["claimed", "pending", "blocked", "failed", "done"];
    const sorted = [...tasks].sort((a, b) => order.indexOf(a.state) - order.indexOf(b.state));
    rows = sorted.slice(0, Math.max(0, height)).map((task) => taskRow(task, width));
  }
  return framed(rows, title, width, Math.max(0, height)).map((row) => paintSpans(theme, row));
}

function taskRow(task: TaskEntry, width: number): Row {
  const who = taskHolder(task, (name) => oneLine(name, 20));
  const tail = taskOutcome(task, (result) => `${GLYPH.next} ${oneLine(result, 40)}`);
  const row: Row = [
    { text: ` ${task.state.padEnd(8)}`, style: STATE_STYLE[task.state] },
    { text: `${shortId(task.task_id)} `, style: ROLE.faint },
    { text: cleanText(oneLine(task.title, 60), false), style: ROLE.strong },
  ];
  if (who) row.push({ text: `  ${cleanText(who, false)}`, style: ROLE.busy });
  if (tail) row.push({ text: `  ${cleanText(tail, false)}`, style: ROLE.faint });
  return clipRow(row, width);
}
