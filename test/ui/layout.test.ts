// The layout draws a frame only when it differs from the last one (a spinner tick between two
// glyphs draws nothing), renders only the boxes whose text changed (and the panel over them),
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
  it("renders only the boxes whose text changed, and the panel over a changed box", () => {
    const { layout } = openLayout();
    const rendered = new Set<unknown>();
    for (const child of layout.screen.children as unknown as { render(): void }[]) {
      const render = child.render.bind(child);
      child.render = () => (rendered.add(child), render());
    }
    const panel = ["┌ the panel ┐", "│ root      │", "│ worker    │"];
    layout.paint(frame("", panel, ["hello", "a line under the panel"]));
    rendered.clear();
    // Only the status bar's text changed: the status bar alone is rendered.
    layout.paint(frame("", panel, ["hello", "a line under the panel"], "main · 2 tok"));
    expect(rendered.size).toBe(1);
    expect(layout.screenText().at(-1)).toContain("main · 2 tok");
    rendered.clear();
    // The scrollback (under the panel) changed: the panel is drawn over it again.
    layout.paint(frame("", panel, ["hi there", "another line under it"], "main · 2 tok"));
    expect(rendered.size).toBe(2);
    const text = layout.screenText().join("\n");
    expect(text).toContain("│ root      │");
    expect(text).toContain("hi there");
    layout.destroy();
  });
});
