// Plain-text screens: the /help text (shown by the app as a notice) and the too-small message.
import { APPROVAL_KEY } from "./approvals.js";
import { displayWidth, padToWidth, truncateToWidth } from "./text-width.js";
import type { Line } from "./theme.js";

export const MIN_WIDTH = 40;
export const MIN_HEIGHT = 10;

/**
 * The keys and commands, one per line; `panelKey` opens the agent panel, `mouseKey` (when the
 * app has one) toggles mouse reporting.
 */
/**
 * `commands`: [how it is typed, one line] for every command, from the command table
 * (commands/table.ts helpRows), the person's own included.
 */
export function renderHelp(
  panelKey: string,
  mouseKey: string | undefined,
  commands: readonly (readonly [string, string])[],
): string[] {
  const keys: [string, string][] = [
    ["Enter", "send (queued while the agent is busy)"],
    ["Shift+Enter, Ctrl+J", "new line"],
    ["Up / Down", "input history"],
    ["PageUp / PageDown", "scroll (also the mouse wheel)"],
    ["Ctrl+Up", "parent"],
    ["Ctrl+Down", "newest child"],
    ["Ctrl+Left / Right", "previous / next sibling (wrapping)"],
    [panelKey, "agent panel (type to filter; Enter jumps)"],
    ["Ctrl+N", "next agent that needs you (approval, error, finished since viewed)"],
    ["Ctrl+F", "search every agent's transcript (/search)"],
    ...(mouseKey
      ? [[mouseKey, "mouse on/off (off: select text with the terminal)"] as [string, string]]
      : []),
    ["Shift+drag", "select text while the mouse is on"],
    ["Alt+Left / Right", "word left / right in the input"],
    ["y / a / n", "approval shown: allow once / allow its pattern for the tree / deny"],
    [APPROVAL_KEY, "go to the agent with the oldest approval request"],
    ["Escape", "interrupt this agent (not its children)"],
    ["Ctrl+X", "stop this agent and all its descendants (they stay alive; /stop)"],
    ["Ctrl+C", "interrupt; twice within 2 s quits"],
  ];
  const own = commands.length > 0 ? table(commands) : [];
  return ["Keys", ...table(keys), "Commands", ...own];
}

function table(rows: readonly (readonly [string, string])[]): string[] {
  const column = Math.max(...rows.map(([key]) => displayWidth(key))) + 2;
  return rows.map(([key, text]) => `  ${padToWidth(key, column)}${text}`);
}

/** Shown instead of the UI when the terminal is smaller than MIN_WIDTH×MIN_HEIGHT. */
export function renderTooSmall(width: number, height: number): Line[] {
  const text = [
    `terminal too small: need ${MIN_WIDTH}×${MIN_HEIGHT}`,
    `(now ${Math.max(0, width)}×${Math.max(0, height)})`,
  ];
  return text
    .slice(0, Math.max(1, height))
    .map((line) => truncateToWidth(line, Math.max(0, width)));
}
