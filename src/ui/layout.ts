// The blessed screen and its thin widgets, top to bottom: scrollback, status layer, spinner,
// separator, input, status bar; plus the agent panel overlay. paint() only places lines that the
// pure views in ./views made; nothing here formats agent text.
import { PassThrough } from "node:stream";
import type { Widgets } from "blessed";
import * as blessed from "./views/blessed-lib.js";
import { installLineParse } from "./views/blessed-parse.js";
import { renderByRows } from "./views/blessed-rows.js";
import { installTerminalWidths } from "./views/blessed-widths.js";
import { approvalRoom } from "./views/approvals.js";
import { toAscii } from "./views/glyphs.js";
import { dimForBlink, type Line } from "./views/theme.js";

export interface Frame {
  scrollback: Line[];
  statusLayer: Line[];
  /** "" hides the spinner row. */
  spinner: Line;
  separator: Line;
  input: Line[];
  statusBar: Line;
  /** The agent panel's lines when it is open. */
  panel?: Line[];
  /** When set, the whole screen shows these lines instead (a too-small terminal). */
  tooSmall?: Line[];
}

export interface Layout {
  readonly screen: Widgets.Screen;
  width(): number;
  height(): number;
  /** The most rows the status layer (approval requests and awaited agents) gets on this screen. */
  statusLayerRoom(): number;
  /** Rows the scrollback gets with these other parts (for the views to render exactly that). */
  scrollbackRows(parts: { statusLayer: number; spinner: boolean; input: number }): number;
  /** Panel content size (inside its frame, which the panel's lines draw: one more each side). */
  panelSize(): { width: number; height: number };
  /** Draws `frame`; a frame that places and shows exactly what the last one did draws nothing. */
  paint(frame: Frame): void;
  /** Forgets what the terminal shows (Ctrl+L): the next paint draws every cell again. */
  redraw(): void;
  /** The screen buffer's text rows as last drawn (for tests and benchmarks). */
  screenText(): string[];
  onResize(listener: () => void): void;
  destroy(): void;
}

export const MAX_INPUT_ROWS = 6;
const MAX_STATUS_LAYER_SHARE = 0.4;
/** Rows the panel leaves below it: the separator, one row of input, the status bar. */
const PANEL_BELOW = 3;

export interface LayoutOptions {
  output: NodeJS.WriteStream;
  /** A terminal name for blessed's terminfo (default $TERM). */
  terminal?: string;
  /** Draw every glyph as ASCII (glyphs.ts). */
  ascii?: boolean;
}

export function createLayout(options: LayoutOptions): Layout {
  installTerminalWidths();
  installLineParse();
  // Input is parsed by ./keys.ts from stdin; blessed gets a stream that never speaks.
  const input = new PassThrough();
  const screen = blessed.screen({
    input: input as unknown as NodeJS.ReadStream,
    output: options.output,
    fullUnicode: true,
    forceUnicode: true,
    smartCSR: true,
    autoPadding: false,
    warnings: false,
    title: "warren",
    ...(options.terminal ? { terminal: options.terminal } : {}),
  });
  // Draw box and line characters as UTF-8, never through the terminal's ACS charset (which tmux
  // and some terminfo entries get wrong: "─" would show as "q").
  blessed.drawLinesAsUtf8(screen);
  // Dim text is tagged blink (blessed knows no dim): the terminal gets SGR 2 (theme.ts).
  blessed.filterOutput(screen, dimForBlink);
  const glyphs = options.ascii ? toAscii : (line: Line) => line;
  const box = (extra: Widgets.BoxOptions = {}) =>
    blessed.box({
      parent: screen,
      left: 0,
      width: "100%",
      height: 1,
      tags: true,
      wrap: false,
      ...extra,
    });
  const scrollback = box({ top: 0 });
  const statusLayer = box();
  const spinner = box();
  const separator = box();
  const inputBox = box();
  const statusBar = box();
  // The panel's frame is part of its lines (drawn from the glyph table, so it can be ASCII). It
  // covers the screen edge to edge above the separator, input and status bar: no scrollback text
  // shows around it (its rows past its lines are blank, the box's own cleared area).
  const panel = blessed.box({
    parent: screen,
    top: 0,
    left: 0,
    width: "100%",
    height: `100%-${PANEL_BELOW}`,
    tags: true,
    wrap: false,
    hidden: true,
  });
  const parts = [scrollback, statusLayer, spinner, separator, inputBox, statusBar];
  // Each box draws only the rows whose text changed (or that a box drawn before it wrote over).
  const rows = renderByRows(screen, [...parts, panel]);

  const width = () => Math.max(1, screen.width as number);
  const height = () => Math.max(1, screen.height as number);

  const statusLayerRoom = () => Math.max(1, Math.floor(height() * MAX_STATUS_LAYER_SHARE));
  // Past its share only for a long approval request, which is shown whole (views/approvals.ts).
  const statusLayerRows = (n: number) =>
    Math.min(n, Math.max(statusLayerRoom(), approvalRoom(height())));
  const inputRows = (n: number) => Math.min(MAX_INPUT_ROWS, Math.max(1, n));

  /**
   * What this frame changed. blessed's render draws every box and then compares the rows it
   * marked with what the terminal shows; our boxes draw only their rows whose text changed (and
   * those a box drawn before them wrote: the panel over the scrollback), see blessed-rows.ts. A
   * frame that changed no text and moved nothing renders nothing (a spinner tick between two
   * glyphs); one that moved, showed or hid a box, or a new size, draws every row of every box.
   */
  let changed = false;
  /** A box moved, appeared or went (or a redraw was asked for): every row is drawn. */
  let moved = true;
  /** Where each box was placed (top and rows; hidden: no entry). */
  const placed = new Map<Widgets.BoxElement, string>();
  let drawnSize = "";

  const place = (element: Widgets.BoxElement, top: number, rows: number, lines: Line[]) => {
    if (rows <= 0) {
      if (placed.delete(element)) moved = true;
      element.hide();
      return top;
    }
    const where = `${top} ${rows}`;
    if (placed.get(element) !== where) {
      placed.set(element, where);
      moved = true;
    }
    element.show();
    element.top = top;
    element.height = rows;
    setText(element, lines.slice(0, rows));
    return top + rows;
  };

  /** The lines each box was last given (after the glyph table). */
  const given = new Map<Widgets.BoxElement, Line[]>();

  /**
   * Only changed text needs blessed to parse its tags; the box is not blanked first (blessed's
   * setContent would), as its render puts every row it shows.
   */
  const setText = (element: Widgets.BoxElement, lines: Line[]) => {
    const shown = lines.map(glyphs);
    const before = given.get(element);
    if (before && before.length === shown.length && before.every((line, i) => line === shown[i])) {
      return;
    }
    given.set(element, shown);
    const content = shown.join("\n");
    if (content === element.content) return;
    blessed.setContentKeepingCells(element, content);
    changed = true;
  };

  const buffer = () => blessed.screenCells(screen);
  /** The screen's text rows as last read, and the rows drawn since (all: a new buffer). */
  let texts: { lines: blessed.Cells[]; rows: string[]; stale: Set<number> } | undefined;

  const render = () => {
    const size = `${width()}x${height()}`;
    if (moved || size !== drawnSize) {
      moved = false;
      changed = false;
      drawnSize = size;
      rows.begin(true);
      screen.render();
      texts = undefined;
      return;
    }
    if (!changed) return;
    changed = false;
    rows.begin(false);
    for (const child of screen.children as Widgets.BoxElement[]) {
      if (!child.hidden) child.render();
    }
    const lines = buffer();
    if (texts) lines.forEach((line, y) => line.dirty && texts!.stale.add(y));
    screen.draw(0, lines.length - 1);
  };

  /** One row's text; a wide character's second cell holds a placeholder ("\x03"): not text. */
  const chars: string[] = [];
  const rowText = (cells: blessed.Cells) => {
    chars.length = 0;
    for (const cell of cells) if (cell[1] !== "\x03") chars.push(cell[1]);
    return chars.join("");
  };

  return {
    screen,
    width,
    height,
    statusLayerRoom,
    scrollbackRows(p) {
      const used =
        statusLayerRows(p.statusLayer) + (p.spinner ? 1 : 0) + 1 + inputRows(p.input) + 1;
      return Math.max(1, height() - used);
    },
    panelSize() {
      // Inside its frame: one column each side, one row above and below.
      return { width: Math.max(1, width() - 2), height: Math.max(1, height() - PANEL_BELOW - 2) };
    },
    paint(frame) {
      if (frame.tooSmall) {
        for (const part of parts) part.hide();
        panel.hide();
        placed.clear();
        moved = true;
        place(scrollback, 0, height(), frame.tooSmall);
        render();
        return;
      }
      const layerRows = statusLayerRows(frame.statusLayer.length);
      const rows = this.scrollbackRows({
        statusLayer: frame.statusLayer.length,
        spinner: frame.spinner !== "",
        input: frame.input.length,
      });
      let top = place(scrollback, 0, rows, frame.scrollback);
      top = place(statusLayer, top, layerRows, frame.statusLayer);
      top = place(spinner, top, frame.spinner ? 1 : 0, [frame.spinner]);
      top = place(separator, top, 1, [frame.separator]);
      top = place(inputBox, top, inputRows(frame.input.length), frame.input);
      place(statusBar, top, 1, [frame.statusBar]);
      if (frame.panel) {
        setText(panel, frame.panel);
        if (panel.hidden) moved = true;
        panel.show();
        panel.setFront();
      } else {
        if (!panel.hidden) moved = true;
        panel.hide();
      }
      render();
    },
    redraw() {
      screen.realloc();
      moved = true;
      texts = undefined;
    },
    screenText() {
      // Read after every frame by tests and benchmarks: only the rows drawn since are read again.
      const lines = buffer();
      if (!texts || texts.lines !== lines) {
        texts = { lines, rows: lines.map(rowText), stale: new Set() };
      }
      for (const y of texts.stale) texts.rows[y] = rowText(lines[y]!);
      texts.stale.clear();
      return [...texts.rows];
    },
    onResize(listener) {
      screen.on("resize", listener);
    },
    destroy() {
      screen.destroy();
    },
  };
}
