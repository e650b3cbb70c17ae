// Keys are data: which action a key asks for, given where the keys go. Pure; the app performs the
// action. Editing keys never get here: the input editor takes them first (see editorSees).
import type { KeyEvent } from "./keys.js";
import type { ViewEvent } from "./view-state.js";
import type { Direction } from "./views/navigation.js";

export interface KeyState {
  /** Where keys go: the agent panel, the search result list, the /rewind picker, or the input. */
  focus: "input" | "panel" | "search" | "rewind";
  /** The panel's filter has text (Escape clears it before it closes the panel). */
  panelFiltered: boolean;
  /** The input is taking a deny reason (after `n`). */
  denying: boolean;
  /** y / a / n answer the viewed agent's oldest request: one waits and the input is empty. */
  answering: boolean;
  /** Ctrl+C was pressed a moment ago: another one quits. */
  quitArmed: boolean;
  /** Lines PageUp and PageDown scroll. */
  page: number;
}

export type KeyAction =
  | { type: "none" }
  /** A change of view state only (scrolling, the panel's selection and filter). */
  | { type: "view"; event: ViewEvent }
  /** A key for the search result list (search.ts's searchKey reads it). */
  | { type: "search-key"; key: KeyEvent }
  /** A key for the /rewind picker (rewind-picker.ts's rewindPickerKey reads it). */
  | { type: "rewind-key"; key: KeyEvent }
  /** A click on the scrollback's row `row` (a fold's line or events toggle the fold). */
  | { type: "click"; row: number }
  | { type: "quit" }
  /** The viewed agent's turn; Ctrl+C arms the quit, Escape says when nothing was running. */
  | { type: "interrupt"; by: "ctrl-c" | "escape" }
  /** The viewed agent and all its descendants (as /stop). */
  | { type: "stop" }
  | { type: "move"; direction: Direction }
  | { type: "open-panel" }
  /** The panel's selected agent (the panel closes). */
  | { type: "go-selected" }
  /** To the agent whose approval request is the tree's oldest (the panel closes). */
  | { type: "oldest-request" }
  /** To the next agent that needs the person (the panel closes). */
  | { type: "next-needing" }
  | { type: "search-prompt" }
  | { type: "toggle-mouse" }
  | { type: "redraw" }
  | { type: "submit" }
  | { type: "complete" }
  | { type: "history"; direction: "older" | "newer" }
  | { type: "answer"; tree: boolean }
  | { type: "deny-start" }
  | { type: "deny-send" }
  | { type: "deny-cancel" };

const NONE: KeyAction = { type: "none" };
const view = (event: ViewEvent): KeyAction => ({ type: "view", event });

/** Does the input editor see this key first? Not while a list has the keys, nor y/a/n answers. */
export function editorSees(key: KeyEvent, state: KeyState): boolean {
  return state.focus === "input" && !(state.answering && isAnswerKey(key));
}

/** What a key the editor did not take asks for. */
export function keyAction(key: KeyEvent, state: KeyState): KeyAction {
  if (state.focus === "panel") return panelKey(key, state);
  if (state.focus === "search") return { type: "search-key", key };
  if (state.focus === "rewind") return { type: "rewind-key", key };
  if (state.answering && isAnswerKey(key)) {
    return key.text === "n" ? { type: "deny-start" } : { type: "answer", tree: key.text === "a" };
  }
  if (key.type === "mouse") {
    if (key.action === "wheelup") return view({ type: "scroll", by: 3 });
    if (key.action === "wheeldown") return view({ type: "scroll", by: -3 });
    if (key.action === "click") return { type: "click", row: key.row };
    return NONE;
  }
  if (key.type !== "key") return NONE;
  const { name, ctrl, meta, shift } = key;
  const enter = name === "enter" && !shift && !meta;
  if (state.denying && name === "escape" && !ctrl) return { type: "deny-cancel" };
  if (state.denying && enter) return { type: "deny-send" };
  if (ctrl && name === "c") {
    return state.quitArmed ? { type: "quit" } : { type: "interrupt", by: "ctrl-c" };
  }
  const command = ctrl ? CTRL_KEYS.get(name) : undefined;
  if (command) return command;
  if (name === "escape" && !ctrl) return { type: "interrupt", by: "escape" };
  if (enter) return { type: "submit" };
  if (name === "tab") return { type: "complete" };
  if (name === "pageup") return view({ type: "scroll", by: state.page });
  if (name === "pagedown") return view({ type: "scroll", by: -state.page });
  if (name === "up") return shift ? view({ type: "scroll", by: 1 }) : history("older");
  if (name === "down") return shift ? view({ type: "scroll", by: -1 }) : history("newer");
  return NONE;
}

/** Ctrl+letter and Ctrl+arrow commands while the input has the keys. */
const CTRL_KEYS = new Map<string, KeyAction>([
  ["x", { type: "stop" }],
  ["up", { type: "move", direction: "parent" }],
  ["down", { type: "move", direction: "child" }],
  ["left", { type: "move", direction: "prev" }],
  ["right", { type: "move", direction: "next" }],
  ["t", { type: "open-panel" }],
  ["g", { type: "oldest-request" }],
  ["n", { type: "next-needing" }],
  ["f", { type: "search-prompt" }],
  ["o", { type: "toggle-mouse" }],
  ["l", { type: "redraw" }],
]);

const history = (direction: "older" | "newer"): KeyAction => ({ type: "history", direction });

/** The agent panel: typing filters, ↑↓ select, Enter goes, Escape clears the filter, then closes. */
function panelKey(key: KeyEvent, state: KeyState): KeyAction {
  if (key.type === "text") return view({ type: "panel-type", text: key.text });
  if (key.type !== "key") return NONE;
  const { name, ctrl } = key;
  if (name === "up") return view({ type: "panel-move", by: -1 });
  if (name === "down") return view({ type: "panel-move", by: 1 });
  if (name === "enter") return { type: "go-selected" };
  if (ctrl && name === "g") return { type: "oldest-request" };
  if (ctrl && name === "n") return { type: "next-needing" };
  if (name === "backspace") return view({ type: "panel-backspace" });
  if (name === "escape" && state.panelFiltered) return view({ type: "panel-clear" });
  if (name === "escape" || (ctrl && (name === "t" || name === "c"))) {
    return view({ type: "panel-close" });
  }
  return NONE;
}

function isAnswerKey(key: KeyEvent): key is { type: "text"; text: "y" | "a" | "n" } {
  return key.type === "text" && (key.text === "y" || key.text === "a" || key.text === "n");
}
