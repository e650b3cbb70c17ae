// The layout draws a frame only when it differs from the last one (a spinner tick between two
// glyphs draws nothing), draws only the rows whose text changed (and the panel's rows over them),
// and Ctrl+L's redraw draws again whatever the frame.
import { PassThrough } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { createLayout, type Frame } from "../../src/ui/layout.js";

function openLayout() {
  const output = Object.assign(new PassThrough(), { isTTY: true, columns: 60, rows: 20 });
  output.resume();
  const layout = createLayout({
    output: output as unknown as NodeJS.WriteStream,
    terminal: "xterm-256color",
  });
  // Every render, whole or of some boxes, ends in one draw.
  const draw = vi.spyOn(layout.screen, "draw");
  return { layout, renders: () => draw.mock.calls.length };
}

const frame = (
  spinner: string,
  panel?: string[],
  scrollback = ["hello"],
  statusBar = "main",
): Frame => ({
  scrollback,
  statusLayer: [],
  spinner,
  separator: "──",
  input: ["❯ "],
  statusBar,
  ...(panel ? { panel } : {}),
});

describe("the layout's paint", () => {
  it("draws a changed frame, skips an identical one, and draws again after a redraw", () => {
    const { layout, renders } = openLayout();
    layout.paint(frame("◐ thinking"));
    expect(renders()).toBe(1);
    layout.paint(frame("◐ thinking"));
    expect(renders()).toBe(1);
    layout.paint(frame("◓ thinking"));
    expect(renders()).toBe(2);
    layout.paint(frame("")); // the spinner row goes: the rows above move
    expect(renders()).toBe(3);
    layout.paint(frame("", ["a panel"]));
    expect(renders()).toBe(4);
    layout.paint(frame("", ["a panel"]));
    expect(renders()).toBe(4);
    layout.paint(frame(""));
    expect(renders()).toBe(5);
    expect(layout.screenText().join("\n")).not.toContain("a panel");
    layout.redraw();
    layout.paint(frame(""));
    expect(renders()).toBe(6);
    layout.destroy();
  });
});

describe("a frame that moves nothing", () => {
  it("draws only the rows whose text changed, and the panel's rows over a changed row", () => {
    const { layout } = openLayout();
    const screen = layout.screen as unknown as {
      lines: { dirty?: boolean }[];
      draw(start: number, end: number): void;
    };
    // The rows handed to the terminal comparison: those some box wrote a changed cell in.
    let drawn: number[] = [];
    const draw = screen.draw.bind(screen);
    screen.draw = (start, end) => {
      drawn = screen.lines.flatMap((line, y) => (line.dirty ? [y] : []));
      draw(start, end);
    };
    const panel = ["┌ the panel ┐", "│ root      │", "│ worker    │"];
    layout.paint(frame("", panel, ["hello", "a line under the panel", "", "", "and one below"]));
    // Only the status bar's text changed: its row alone.
    layout.paint(
      frame(
        "",
        panel,
        ["hello", "a line under the panel", "", "", "and one below"],
        "main · 2 tok",
      ),
    );
    expect(drawn).toEqual([19]);
    expect(layout.screenText().at(-1)).toContain("main · 2 tok");
    // Two scrollback rows changed, one of them under the panel, which is drawn over it again.
    layout.paint(
      frame(
        "",
        panel,
        ["hi there", "another line under it", "", "", "and one below"],
        "main · 2 tok",
      ),
    );
    expect(drawn).toEqual([0, 1]);
    const text = layout.screenText();
    // The panel covers the scrollback from the top-left corner (no text around it).
    expect(text[0]).toMatch(/^┌ the panel ┐ +$/);
    expect(text[1]).toMatch(/^│ root {6}│ +$/);
    expect(text.join("\n")).not.toContain("hi there");
    // A panel row changed: that row alone.
    layout.paint(
      frame(
        "",
        [panel[0]!, "│ root ✓    │", panel[2]!],
        ["hi there", "another line under it", "", "", "and one below"],
        "main · 2 tok",
      ),
    );
    expect(drawn).toEqual([1]);
    expect(layout.screenText()[1]).toContain("│ root ✓    │");
    layout.destroy();
  });
});
