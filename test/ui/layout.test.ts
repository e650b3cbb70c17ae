// The layout draws a frame only when it differs from the last one (a spinner tick between two
// glyphs draws nothing), and Ctrl+L's redraw draws again whatever the frame.
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
  const render = vi.spyOn(layout.screen, "render");
  return { layout, renders: () => render.mock.calls.length };
}

const frame = (spinner: string, panel?: string[]): Frame => ({
  scrollback: ["hello"],
  statusLayer: [],
  spinner,
  separator: "──",
  input: ["❯ "],
  statusBar: "main",
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
