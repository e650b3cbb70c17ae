// The multi-line input: a buffer of characters and collapsed pastes, a cursor, editing and word
// motion, rendering to wrapped rows with the cursor shown; plus per-agent input history.
import { escape } from "./views/blessed-lib.js";
import { escapeControl } from "../text/escape.js";
import type { KeyEvent } from "./keys.js";
import { displayWidth, graphemes, graphemeWidth } from "./views/text-width.js";

/** A large paste, shown as one `[pasted N lines]` cell and submitted whole. */
interface PasteCell {
  paste: string;
}
type Cell = string | PasteCell;

/** Pastes longer than this are shown collapsed. */
export const COLLAPSE_LINES = 10;
export const COLLAPSE_CHARS = 1000;

const isWordChar = (cell: Cell | undefined) =>
  typeof cell === "string" && /[\p{L}\p{N}_]/u.test(cell);

function pasteLabel(cell: PasteCell): string {
  const lines = cell.paste.split("\n").length;
  return lines > 1 ? `[pasted ${lines} lines]` : `[pasted ${cell.paste.length} chars]`;
}

export interface Prompt {
  text: string;
  painted?: string;
}

export interface RenderedInput {
  /** Rows for a tags-enabled box: text escaped, the cursor cell shown inverse. */
  lines: string[];
  /** Total rows before clipping to maxRows. */
  rows: number;
}

export interface InputEditor {
  /**
   * The editing keys: text, pastes, a newline (Shift/Alt+Enter, Ctrl+J), deletion, cursor motion,
   * Ctrl+U. True when the key was the editor's; false leaves it to the app's key table (Enter
   * submits, Up on the first row recalls history, other Ctrl keys are commands).
   */
  handleKey(key: KeyEvent): boolean;
  insert(text: string): void;
  /** A bracketed paste: inserted as text, or as one collapsed cell when large. */
  paste(text: string): void;
  newline(): void;
  backspace(): void;
  deleteForward(): void;
  left(): void;
  right(): void;
  wordLeft(): void;
  wordRight(): void;
  home(): void;
  end(): void;
  /** Moves to the row above; false when already on the first row (the caller recalls history). */
  up(): boolean;
  /** Moves to the row below; false when already on the last row. */
  down(): boolean;
  /** The full text, pastes expanded. */
  value(): string;
  isEmpty(): boolean;
  /** Replaces the text and puts the cursor at its end. */
  set(text: string): void;
  clear(): void;
  /** `prompt` is plain text (it sets the indent); `painted` the same text as tags, if styled. */
  render(width: number, maxRows: number, prompt: Prompt, showCursor: boolean): RenderedInput;
}

export function createInputEditor(): InputEditor {
  let cells: Cell[] = [];
  let cursor = 0;

  const lineStart = (at: number) => {
    let i = at;
    while (i > 0 && cells[i - 1] !== "\n") i--;
    return i;
  };
  const lineEnd = (at: number) => {
    let i = at;
    while (i < cells.length && cells[i] !== "\n") i++;
    return i;
  };

  const insertCells = (more: Cell[]) => {
    cells.splice(cursor, 0, ...more);
    cursor += more.length;
  };

  const editor: InputEditor = {
    handleKey(key) {
      if (key.type === "text") editor.insert(key.text);
      else if (key.type === "paste") editor.paste(key.text);
      else if (key.type === "key") return editingKey(editor, key);
      else return false;
      return true;
    },
    insert(text) {
      insertCells(graphemes(text.replace(/\r\n?/g, "\n")));
    },
    paste(text) {
      const clean = text.replace(/\r\n?/g, "\n");
      if (clean.split("\n").length > COLLAPSE_LINES || clean.length > COLLAPSE_CHARS) {
        insertCells([{ paste: clean }]);
      } else {
        insertCells(graphemes(clean));
      }
    },
    newline() {
      insertCells(["\n"]);
    },
    backspace() {
      if (cursor === 0) return;
      cells.splice(cursor - 1, 1);
      cursor--;
    },
    deleteForward() {
      if (cursor < cells.length) cells.splice(cursor, 1);
    },
    left() {
      cursor = Math.max(0, cursor - 1);
    },
    right() {
      cursor = Math.min(cells.length, cursor + 1);
    },
    wordLeft() {
      while (cursor > 0 && !isWordChar(cells[cursor - 1])) cursor--;
      while (cursor > 0 && isWordChar(cells[cursor - 1])) cursor--;
    },
    wordRight() {
      while (cursor < cells.length && !isWordChar(cells[cursor])) cursor++;
      while (cursor < cells.length && isWordChar(cells[cursor])) cursor++;
    },
    home() {
      cursor = lineStart(cursor);
    },
    end() {
      cursor = lineEnd(cursor);
    },
    up() {
      const start = lineStart(cursor);
      if (start === 0) return false;
      const column = cursor - start;
      const prevStart = lineStart(start - 1);
      cursor = Math.min(prevStart + column, start - 1);
      return true;
    },
    down() {
      const end = lineEnd(cursor);
      if (end >= cells.length) return false;
      const column = cursor - lineStart(cursor);
      cursor = Math.min(end + 1 + column, lineEnd(end + 1));
      return true;
    },
    value() {
      return cells.map((c) => (typeof c === "string" ? c : c.paste)).join("");
    },
    isEmpty: () => cells.length === 0,
    set(text) {
      cells = graphemes(text);
      cursor = cells.length;
    },
    clear() {
      cells = [];
      cursor = 0;
    },
    render(width, maxRows, prompt, showCursor) {
      return renderCells(cells, cursor, width, maxRows, prompt, showCursor);
    },
  };
  return editor;
}

/** A named key, when it edits; Ctrl+arrows and Shift+↑↓ are the app's (moving, scrolling). */
function editingKey(editor: InputEditor, key: Extract<KeyEvent, { type: "key" }>): boolean {
  const { name, ctrl, meta, shift } = key;
  if ((name === "enter" && (shift || meta)) || name === "newline") editor.newline();
  else if (name === "backspace") editor.backspace();
  else if (name === "delete" || (ctrl && name === "d")) editor.deleteForward();
  else if (name === "home" || (ctrl && name === "a")) editor.home();
  else if (name === "end" || (ctrl && name === "e")) editor.end();
  else if (ctrl && name === "u") editor.clear();
  else if (ctrl || (shift && (name === "up" || name === "down"))) return false;
  else if (name === "left") (meta ? editor.wordLeft : editor.left)();
  else if (name === "right") (meta ? editor.wordRight : editor.right)();
  else if (name === "up") return editor.up();
  else if (name === "down") return editor.down();
  else return false;
  return true;
}

/** Wraps the cells into rows of `width` columns (the prompt indents every row). */
function renderCells(
  cells: Cell[],
  cursor: number,
  width: number,
  maxRows: number,
  prompt: Prompt,
  showCursor: boolean,
): RenderedInput {
  const indent = displayWidth(prompt.text);
  const avail = Math.max(4, width - indent - 1);
  // Each row: escaped text pieces; cursorRow marks where the cursor sits.
  const rows: string[][] = [[]];
  const rowWidths = [0];
  let cursorRow = 0;
  const place = (piece: string, w: number, isCursor: boolean) => {
    let row = rows.length - 1;
    if (rowWidths[row]! + w > avail) {
      rows.push([]);
      rowWidths.push(0);
      row++;
    }
    rows[row]!.push(isCursor && showCursor ? `{inverse}${piece}{/inverse}` : piece);
    rowWidths[row]! += w;
    if (isCursor) cursorRow = row;
  };
  for (let i = 0; i <= cells.length; i++) {
    const cell = cells[i];
    const atCursor = i === cursor;
    if (cell === undefined || cell === "\n") {
      if (atCursor) place(" ", 1, true);
      if (cell === "\n") {
        rows.push([]);
        rowWidths.push(0);
      }
      continue;
    }
    if (typeof cell !== "string") {
      const label = pasteLabel(cell);
      // With the cursor on it, the whole label is shown inverse.
      place(`{bold}${escape(label)}{/bold}`, displayWidth(label), atCursor);
      continue;
    }
    const shown = escapeControl(cell);
    const w = shown === cell ? graphemeWidth(cell) : displayWidth(shown);
    place(escape(shown), w, atCursor);
  }
  const total = rows.length;
  // Keep the cursor's row visible when there are more rows than fit.
  const first = Math.max(0, Math.min(cursorRow - maxRows + 1, total - maxRows));
  const visible = rows.slice(first, first + maxRows);
  const pad = " ".repeat(indent);
  return {
    lines: visible.map(
      (pieces, i) =>
        (first + i === 0 ? (prompt.painted ?? escape(prompt.text)) : pad) + pieces.join(""),
    ),
    rows: total,
  };
}

/** Input history of one agent: Up recalls older entries, Down newer, then the draft. */
export interface InputHistory {
  add(text: string): void;
  /** The entry before the current one (the draft is saved on the first step), or undefined. */
  older(draft: string): string | undefined;
  newer(): string | undefined;
  reset(): void;
}

export function createInputHistory(limit = 200): InputHistory {
  const entries: string[] = [];
  let index = -1; // -1: editing the draft
  let draft = "";
  return {
    add(text) {
      if (text.trim() && entries[entries.length - 1] !== text) entries.push(text);
      if (entries.length > limit) entries.shift();
      index = -1;
    },
    older(current) {
      if (entries.length === 0) return undefined;
      if (index === -1) {
        draft = current;
        index = entries.length;
      }
      if (index === 0) return undefined;
      index--;
      return entries[index];
    },
    newer() {
      if (index === -1) return undefined;
      index++;
      if (index >= entries.length) {
        index = -1;
        return draft;
      }
      return entries[index];
    },
    reset() {
      index = -1;
    },
  };
}
