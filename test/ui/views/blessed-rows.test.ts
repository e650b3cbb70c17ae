// Drawing the layout's boxes by rows (only the rows whose text changed, and those a box drawn
// before wrote over) leaves the screen buffer, and what the terminal was sent, as blessed's own
// render of every box from scratch would, and screenText reads it: random frames of tags, wide
// characters, combining marks, cut lines, the panel over the scrollback opening and closing,
// boxes moving (seeded, repeatable).
import { PassThrough } from "node:stream";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { createLayout, type Frame } from "../../../src/ui/layout.js";
import { random } from "./helpers.js";

type Cell = [number, string];
interface Buffer {
  lines: Cell[][];
  olines: Cell[][];
  children: { hidden?: boolean }[];
  clearRegion(xi: number, xl: number, yi: number, yl: number): void;
}

const SPANS = [
  "word ",
  "{bold}bold{/bold}",
  "{red-fg}red{/red-fg} ",
  "{inverse}{green-fg}both{/green-fg}{/inverse}",
  "{blink}dim{/blink}",
  "{yellow-fg}open to the end ",
  "中文",
  "😀",
  "👍🏽",
  "e\u0301",
  "─".repeat(30),
  "\t",
  "",
];

function line(next: () => number): string {
  let out = "";
  const n = Math.floor(next() * 10);
  for (let i = 0; i < n; i++) out += SPANS[Math.floor(next() * SPANS.length)];
  return out;
}

/**
 * Mostly the last frame with a few lines changed, as frames go, or scrolled by a line (a stream
 * growing, the panel following its selection); sometimes all new.
 */
function nextFrame(next: () => number, last: Frame | undefined): Frame {
  const lines = (n: number, before: string[] | undefined) => {
    const scrolled = before && next() < 0.25 ? [...before.slice(1), line(next)] : before;
    return Array.from({ length: n }, (_, i) =>
      scrolled?.[i] !== undefined && next() < 0.8 ? scrolled[i]! : line(next),
    );
  };
  const pick = <T>(a: T, b: T, p: number) => (next() < p ? a : b);
  const panelOpen = last ? pick(!!last.panel, !last.panel, 0.85) : false;
  return {
    scrollback: lines(
      pick(last?.scrollback.length ?? 5, Math.floor(next() * 30), 0.8),
      last?.scrollback,
    ),
    statusLayer: lines(
      pick(last?.statusLayer.length ?? 0, Math.floor(next() * 4), 0.9),
      last?.statusLayer,
    ),
    spinner: pick(last?.spinner ?? "", next() < 0.5 ? "" : `◐ ${line(next)}`, 0.8),
    separator: pick(last?.separator ?? "──", `── ${line(next)}`, 0.9),
    input: lines(pick(last?.input.length ?? 1, 1 + Math.floor(next() * 3), 0.9), last?.input),
    statusBar: pick(last?.statusBar ?? "", line(next), 0.6),
    ...(panelOpen ? { panel: lines(12, last?.panel) } : {}),
  };
}

describe("drawing the layout's boxes by rows", () => {
  it("leaves the buffer and the terminal as blessed's whole render would", () => {
    const require = createRequire(import.meta.url);
    const element = require("blessed/lib/widgets/element.js") as {
      prototype: { render(this: unknown): unknown };
    };
    const open = () => {
      const output = Object.assign(new PassThrough(), { isTTY: true, columns: 50, rows: 24 });
      output.resume();
      const layout = createLayout({
        output: output as unknown as NodeJS.WriteStream,
        terminal: "xterm-256color",
      });
      return { layout, screen: layout.screen as unknown as Buffer };
    };
    // Frames drawn by rows on one screen; the same frames drawn whole by blessed on another.
    const mine = open();
    const reference = open();
    const copy = (rows: Cell[][]) => rows.map((row) => row.map(([a, c]) => `${a}:${c}`).join("|"));
    const next = random(31);
    let frame: Frame | undefined;
    try {
      for (let round = 0; round < 400; round++) {
        frame = nextFrame(next, frame);
        if (round % 97 === 50) mine.layout.redraw();
        mine.layout.paint(frame);
        reference.layout.paint(frame);
        reference.screen.clearRegion(0, 50, 0, 24);
        for (const child of reference.screen.children) {
          if (!child.hidden) element.prototype.render.call(child);
        }
        const whole = copy(reference.screen.lines);
        expect(copy(mine.screen.lines), `round ${round}`).toEqual(whole);
        // What the terminal was sent: blessed marks a wide character it drew "\0" (drawn again
        // with its row), the rest is the cell as drawn.
        const sent = mine.screen.olines.map((row, y) =>
          row.map((cell, x) => (cell[1] === "\0" ? mine.screen.lines[y]![x]! : cell)),
        );
        expect(copy(sent), `round ${round}: the terminal`).toEqual(whole);
        // The text tests read (kept between reads, the rows drawn since read again).
        if (round % 3 === 0) {
          const text = mine.screen.lines.map((row) =>
            row
              .map((cell) => cell[1])
              .join("")
              .replaceAll("\x03", ""),
          );
          expect(mine.layout.screenText(), `round ${round}: screenText`).toEqual(text);
        }
      }
    } finally {
      mine.layout.destroy();
      reference.layout.destroy();
    }
  });
});
