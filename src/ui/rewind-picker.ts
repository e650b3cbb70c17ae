// The /rewind picker (docs/rewind.md): its state and keys as pure functions. Three steps: the
// viewed agent's turns (newest first), then how much to undo, then a confirmation listing what is
// not undone. dispatch.ts reads the turns once when it opens and the not-undone list once a turn
// and a way are chosen (no read per frame), and runs the rewind through the /rewind command.
import type { NotUndone, RewindMode, TurnInfo } from "../agents/rewind.js";
import type { KeyEvent } from "./keys.js";

/** The second step's choices, in order (typing 1–4 picks one). */
export const REWIND_CHOICES: readonly { mode: RewindMode | undefined; label: string }[] = [
  { mode: "both", label: "files and conversation" },
  { mode: "files", label: "files only" },
  { mode: "conversation", label: "conversation only" },
  { mode: undefined, label: "cancel" },
];

export interface RewindPicker {
  agentId: string;
  /** The agent as shown (name and short id). */
  agentName: string;
  /** Newest first; undefined while they load. */
  turns: readonly TurnInfo[] | undefined;
  /** Why the turns (or the not-undone list) could not be read. */
  error?: string;
  selected: number;
  step: "turns" | "choice" | "confirm";
  /** The selected choice (an index of REWIND_CHOICES). */
  choice: number;
  /** What the rewind will not undo: read for the confirm step. */
  notUndone?: NotUndone;
}

export type RewindPickerAction =
  | { type: "none" }
  | { type: "close" }
  /** Read what rewinding `turn` does not undo; the confirm step follows. */
  | { type: "ask"; turn: TurnInfo; mode: RewindMode }
  /** Confirmed: undo `turn` and every turn after it. */
  | { type: "rewind"; turn: TurnInfo; mode: RewindMode };

export function openRewindPicker(agentId: string, agentName: string): RewindPicker {
  return { agentId, agentName, turns: undefined, selected: 0, step: "turns", choice: 0 };
}

/** The turn the picker has selected, if the turns are read. */
export function selectedTurn(picker: RewindPicker): TurnInfo | undefined {
  return picker.turns?.[picker.selected];
}

/** The chosen way to rewind (undefined: cancel). */
export function chosenMode(picker: RewindPicker): RewindMode | undefined {
  return REWIND_CHOICES[picker.choice]?.mode;
}

type Result = { state: RewindPicker; action: RewindPickerAction };

/**
 * A key while the picker is open. Turns: ↑↓ PageUp/PageDown Home/End select, Enter chooses, Esc
 * closes. Choice: ↑↓ or 1–4, Enter; Esc back. Confirm: y rewinds, n or Esc back.
 */
export function rewindPickerKey(picker: RewindPicker, event: KeyEvent, page: number): Result {
  const none = (state: RewindPicker = picker): Result => ({ state, action: { type: "none" } });
  const close: Result = { state: picker, action: { type: "close" } };
  if (event.type === "key" && event.ctrl && event.name === "c") return close;
  const turn = selectedTurn(picker);
  switch (picker.step) {
    case "turns": {
      if (event.type !== "key") return none();
      const count = picker.turns?.length ?? 0;
      const select = (at: number) =>
        none({ ...picker, selected: Math.max(0, Math.min(count - 1, at)) });
      const { name } = event;
      if (name === "escape") return close;
      if (name === "up") return select(picker.selected - 1);
      if (name === "down") return select(picker.selected + 1);
      if (name === "pageup") return select(picker.selected - Math.max(1, page));
      if (name === "pagedown") return select(picker.selected + Math.max(1, page));
      if (name === "home") return select(0);
      if (name === "end") return select(count - 1);
      if (name === "enter" && turn) return none({ ...picker, step: "choice", choice: 0 });
      return none();
    }
    case "choice": {
      const last = REWIND_CHOICES.length - 1;
      const choose = (choice: number): Result => {
        const mode = REWIND_CHOICES[choice]?.mode;
        if (!turn || mode === undefined) return close;
        return { state: { ...picker, choice }, action: { type: "ask", turn, mode } };
      };
      if (event.type === "text" && /^[1-4]$/.test(event.text))
        return choose(Number(event.text) - 1);
      if (event.type !== "key") return none();
      if (event.name === "escape") return none({ ...picker, step: "turns" });
      if (event.name === "up") return none({ ...picker, choice: Math.max(0, picker.choice - 1) });
      if (event.name === "down")
        return none({ ...picker, choice: Math.min(last, picker.choice + 1) });
      if (event.name === "enter") return choose(picker.choice);
      return none();
    }
    case "confirm": {
      const mode = chosenMode(picker);
      const back = none({ ...picker, step: "choice", notUndone: undefined });
      if (event.type === "text" && event.text.toLowerCase() === "y" && turn && mode) {
        return { state: picker, action: { type: "rewind", turn, mode } };
      }
      if (event.type === "text" && event.text.toLowerCase() === "n") return back;
      if (event.type === "key" && event.name === "escape") return back;
      return none();
    }
  }
}
