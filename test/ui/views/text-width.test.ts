// Column widths: the views' wrapping and blessed's layout agree cell for cell (CJK and emoji two
// columns, combining marks none), so a full-width row with wide characters is drawn whole.
import { describe, expect, it } from "vitest";
import {
  cutToCells,
  installTerminalWidths,
  wideCharPattern,
  zeroWidthTable,
} from "../../../src/ui/views/blessed-widths.js";
import {
  codePointWidth,
  displayWidth,
  isZeroWidth,
  truncateToWidth,
  wrapLine,
  wrapText,
} from "../../../src/ui/views/text-width.js";
import { createScreenBuffer } from "../screen-buffer.js";

describe("display width", () => {
  it("counts ASCII, CJK, emoji, combining marks and modifiers as terminals draw them", () => {
    expect(displayWidth("abc")).toBe(3);
    expect(displayWidth("中文")).toBe(4);
    expect(displayWidth("😀")).toBe(2);
    expect(displayWidth("👍🏽")).toBe(2);
    expect(displayWidth("e\u0301")).toBe(1);
    expect(displayWidth("❯●→←⚠✎✉↳◐✓○✗▍─↑↓…◌")).toBe(18);
    expect(displayWidth("ｈｉ")).toBe(4);
  });

  it("wraps at spaces, breaks long words, and never passes the width", () => {
    expect(wrapLine("alpha beta gamma", 11)).toEqual(["alpha beta", "gamma"]);
    expect(wrapLine("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
    expect(wrapText("  indented\n\nx", 20)).toEqual(["  indented", "", "x"]);
    const text = "中文字符 和表情😀👍🏽 averyveryverylongword e\u0301e\u0301 ".repeat(3);
    for (let width = 1; width <= 30; width++) {
      const rows = wrapLine(text, width);
      for (const row of rows) expect(displayWidth(row)).toBeLessThanOrEqual(width);
      expect(rows.join("").replace(/\s+/g, "")).toBe(
        width > 1 ? text.replace(/\s+/g, "") : rows.join("").replace(/\s+/g, ""),
      );
    }
    expect(truncateToWidth("中文字符", 5)).toBe("中文…");
  });
});

describe("blessed learns the same widths", () => {
  installTerminalWidths();

  it("marks exactly the two-column code points as wide, and the zero-width ones as combining", () => {
    const pattern = wideCharPattern();
    const mismatches: string[] = [];
    for (let cp = 0x20; cp <= 0x3ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      const matched = ch.replace(pattern as unknown as RegExp, "$1\x03") === `${ch}\x03`;
      if (matched !== (codePointWidth(cp) === 2)) mismatches.push(cp.toString(16));
      if (mismatches.length > 5) break;
    }
    expect(mismatches).toEqual([]);
    // A wide character keeps the zero-width code points after it in its cell, before the spare one.
    expect("a👍🏽b中\ufe0fc".replace(pattern as unknown as RegExp, "$1\x03")).toBe(
      "a👍🏽\x03b中\ufe0f\x03c",
    );
    expect("plain".replace(pattern as unknown as RegExp, "??")).toBe("plain");
    expect(isZeroWidth(0x1f3fd)).toBe(true);
    expect(isZeroWidth(0x41)).toBe(false);
  });

  it("gives blessed's combining table the same answers, asked once or again", () => {
    const table = zeroWidthTable();
    const points = [0x41, 0x301, 0x2500, 0x200d, 0xfe0f, 0x1f3fd, 0x1f600, 0xe0041, 0x4e2d];
    for (const round of [1, 2]) {
      const answers = points.map((cp) => Boolean(table[cp]));
      expect(answers, `round ${round}`).toEqual(points.map(isZeroWidth));
    }
    expect(points.map((cp) => codePointWidth(cp))).toEqual([1, 0, 1, 0, 0, 0, 2, 0, 2]);
  });

  it("draws a full-width row holding wide characters and combining marks whole", () => {
    const buffer = createScreenBuffer(10, 5);
    const rows = buffer.show([
      "中23456789",
      "😀23456789",
      "e\u0301234567890",
      "ab中5678😀",
      "👍🏽3456789",
    ]);
    expect(rows).toEqual([
      "中23456789",
      "😀23456789",
      "e\u0301234567890",
      "ab中5678😀",
      "👍🏽3456789",
    ]);
    // A wide character's second column is a spare cell: "2" is drawn in the third column.
    const cells = (buffer.screen as unknown as { lines: [number, string][][] }).lines;
    expect(cells.slice(0, 2).map((row) => row[2]![1])).toEqual(["2", "2"]);
    expect(cells[4]![2]![1]).toBe("3");
    buffer.destroy();
  });

  it("cuts a too-long no-wrap row by cells, keeping closing attributes", () => {
    const combining = (cp: number) => isZeroWidth(cp);
    expect(cutToCells("abcdef", 4, combining)).toBe("abcd");
    expect(cutToCells("\x1b[1mab\x1b[22mcdef\x1b[0m", 3, combining)).toBe(
      "\x1b[1mab\x1b[22mc\x1b[0m",
    );
    expect(cutToCells("😀\x03abc", 3, combining)).toBe("😀\x03a");
    expect(cutToCells("e\u0301bcd", 2, combining)).toBe("e\u0301b");
  });
});
