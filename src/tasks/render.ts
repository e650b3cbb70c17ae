// The task board as lines of text, for `warren tasks` and the TUI's /tasks (a view is a function
// of rows). Titles, names and results are agent text: escaped onto one line each.
import { escapeLine } from "../text/escape.js";
import { oneLine, shortId } from "../text/format.js";
import type { TaskEntry, TaskShownState } from "./board.js";

const STATE_WIDTH = "blocked".length;

/** One line per task, oldest first, then a summary line; `width` bounds each line. */
export function renderTaskBoard(tasks: readonly TaskEntry[], width = 100): string[] {
  if (tasks.length === 0) return ["the task board is empty (agents add tasks with task_add)"];
  const lines = tasks.map((task) => taskLine(task, width));
  lines.push(taskSummary(tasks));
  return lines;
}

function taskLine(task: TaskEntry, width: number): string {
  const head = `${task.state.padEnd(STATE_WIDTH)}  ${shortId(task.task_id)}  `;
  const who = taskHolder(task, escapeLine);
  const after = taskOutcome(task, (result) => `→ ${escapeLine(oneLine(result, 60))}`);
  const tail = [who, after].filter(Boolean).join("  ");
  const room = Math.max(10, width - head.length - (tail ? tail.length + 2 : 0));
  const title = escapeLine(oneLine(task.title, room));
  return `${head}${title}${tail ? `  ${tail}` : ""}`;
}

/** Who holds the task or finished it, "held by NAME ID8" or "by NAME ID8" (`name` shows the name); "" for no one. */
export function taskHolder(task: TaskEntry, name: (text: string) => string): string {
  if (task.claimed_by === null) return "";
  const holds = task.state === "claimed" ? "held by" : "by";
  return `${holds} ${name(task.claimed_by_name ?? "?")} ${shortId(task.claimed_by)}`;
}

/** What an open task waits for ("after ID8, …"), or a finished one's result as `shown`; "" for neither. */
export function taskOutcome(task: TaskEntry, shown: (result: string) => string): string {
  if (task.state === "pending" || task.state === "blocked") {
    return task.depends_on.length ? `after ${task.depends_on.map(shortId).join(", ")}` : "";
  }
  return task.result !== null ? shown(task.result) : "";
}

/** "3 tasks: 1 done, 1 claimed, 1 pending", states in board order. */
export function taskSummary(tasks: readonly { state: TaskShownState }[]): string {
  const order: TaskShownState[] = ["claimed", "pending", "blocked", "done", "failed"];
  const counts = new Map<TaskShownState, number>();
  for (const t of tasks) counts.set(t.state, (counts.get(t.state) ?? 0) + 1);
  const parts = order.filter((s) => counts.has(s)).map((s) => `${counts.get(s)} ${s}`);
  return `${tasks.length} task${tasks.length === 1 ? "" : "s"}: ${parts.join(", ")}`;
}
