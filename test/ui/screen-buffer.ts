// Test helper: draws lines into a blessed box on a real blessed screen whose terminal is a pair of
// fake streams, and reads back what the screen buffer holds (blessed keeps cells as [attr, ch]).
import { PassThrough } from "node:stream";
import blessed from "blessed";
import { installTerminalWidths } from "../../src/ui/views/blessed-widths.js";

export interface ScreenBuffer {
  screen: blessed.Widgets.Screen;
  box: blessed.Widgets.BoxElement;
  /** Puts `lines` (tag strings, `wrap: false`) into the box, renders, returns the text rows. */
  show(lines: readonly string[]): string[];
  /** The text of every screen row (wide characters once, their spare cell dropped), right-trimmed. */
  rows(): string[];
  /** The attribute of each cell of one row (for style checks). */
  attrs(row: number): number[];
  /** Everything written to the fake terminal so far. */
  output(): string;
  destroy(): void;
}

export function createScreenBuffer(width: number, height: number): ScreenBuffer {
  const input = new PassThrough() as PassThrough & {
    isTTY: boolean;
    setRawMode: (on: boolean) => void;
  };
  input.isTTY = true;
  input.setRawMode = () => undefined;
  const output = new PassThrough() as PassThrough & {
    isTTY: boolean;
    columns: number;
    rows: number;
  };
  output.isTTY = true;
  output.columns = width;
  output.rows = height;
  let written = "";
  output.on("data", (chunk: Buffer) => {
    written += chunk.toString("utf8");
  });
  installTerminalWidths();
  const screen = blessed.screen({
    input: input as never,
    output: output as never,
    terminal: "xterm-256color",
    fullUnicode: true,
    forceUnicode: true,
    warnings: false,
    autoPadding: false,
  });
  const box = blessed.box({
    parent: screen,
    top: 0,
    left: 0,
    width,
    height,
    tags: true,
    wrap: false,
  });

  const cells = (): [number, string][][] =>
    (screen as unknown as { lines: [number, string][][] }).lines;
  const rows = (): string[] =>
    cells().map((line) => {
      let text = "";
      for (const cell of line) {
        // A wide character's second column holds "\x03" (blessed never draws it).
        if (cell[1].startsWith("\x03")) continue;
        text += cell[1];
      }
      return text.replace(/\s+$/, "");
    });

  return {
    screen,
    box,
    show(lines) {
      box.setContent(lines.join("\n"));
      screen.render();
      return rows();
    },
    rows,
    attrs(row) {
      return (cells()[row] ?? []).map((cell) => cell[0]);
    },
    output: () => written,
    destroy() {
      screen.destroy();
      input.destroy();
      output.destroy();
    },
  };
}
