// Parsing a box's content line by line gives what blessed's whole-content parse gives (text,
// spare cells, the no-wrap cut, each line's starting attribute), and parses again only the lines
// that changed — none at a render of unchanged content.
import { describe, expect, it, vi } from "vitest";
import { blessedParseContent, installLineParse } from "../../../src/ui/views/blessed-parse.js";
import { createScreenBuffer } from "../screen-buffer.js";
import { random } from "./helpers.js";

installLineParse();

const SPANS = [
  "word ",
  "{bold}bold{/bold}",
  "{red-fg}red{/red-fg}",
  "{inverse}{green-fg}both{/green-fg}{/inverse}",
  "{blink}dim{/blink}",
  "中文",
  "😀",
  "👍🏽",
  "e\u0301",
  "─".repeat(30),
  "{open}literal{close}",
  "\t",
];

/** A line of balanced tags, as the views paint them (paintSpans). */
function line(next: () => number): string {
  let out = "";
  const n = Math.floor(next() * 12);
  for (let i = 0; i < n; i++) out += SPANS[Math.floor(next() * SPANS.length)];
  return out;
}

interface Parsed {
  _pcontent: string;
  _clines: string[] & { attr: number[]; ci: number[]; fake: string[]; mwidth: number };
  content: string;
  parseContent(): boolean;
  _parseTags(text: string): string;
  _parseAttr(lines: unknown): unknown;
}

describe("parsing a box's content line by line", () => {
  it("gives what blessed's own parse gives", () => {
    const buffer = createScreenBuffer(40, 30);
    const next = random(15);
    try {
      const box = buffer.box as unknown as Parsed;
      for (let round = 0; round < 30; round++) {
        const lines = Array.from({ length: 1 + Math.floor(next() * 25) }, () => line(next));
        buffer.show(lines);
        const mine = {
          text: box._pcontent,
          attr: box._clines.attr,
          ci: box._clines.ci,
          fake: box._clines.fake,
          mwidth: box._clines.mwidth,
        };
        delete (box as { _clines?: unknown })._clines;
        blessedParseContent().call(box as never);
        expect(mine).toEqual({
          text: box._pcontent,
          attr: box._clines.attr,
          ci: box._clines.ci,
          fake: box._clines.fake,
          mwidth: box._clines.mwidth,
        });
      }
    } finally {
      buffer.destroy();
    }
  });

  it("parses only changed lines, and nothing when a render finds the content unchanged", () => {
    const buffer = createScreenBuffer(60, 30);
    try {
      const box = buffer.box as unknown as Parsed;
      const rows = Array.from({ length: 25 }, (_, i) => `{bold}row ${i}{/bold} of the panel`);
      buffer.show(rows);
      const tags = vi.spyOn(box, "_parseTags");
      const attrs = vi.spyOn(box, "_parseAttr");
      // Scrolled by one row: one new line at the bottom.
      const shown = buffer.show([...rows.slice(1), "{bold}row 25{/bold} of the panel"]);
      expect(shown[24]).toContain("row 25 of the panel");
      expect(tags.mock.calls.map(([text]) => text)).toEqual(["{bold}row 25{/bold} of the panel"]);
      buffer.screen.render();
      expect(tags).toHaveBeenCalledTimes(1);
      expect(attrs).not.toHaveBeenCalled();
    } finally {
      buffer.destroy();
    }
  });
});
