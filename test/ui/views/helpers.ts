// Assertions for view tests, made on blessed's screen buffer: what a person would see.
import { expect } from "vitest";
import { createScreenBuffer } from "../screen-buffer.js";

const SLACK = 8;

/**
 * Draws `lines` on a screen SLACK columns wider than `width` and returns the text rows, after
 * checking that no line reaches past `width` (every cell beyond it is blank and unstyled).
 */
export function showWithin(lines: readonly string[], width: number): string[] {
  const buffer = createScreenBuffer(width + SLACK, lines.length + 1);
  try {
    const rows = buffer.show(lines);
    const blank = buffer.attrs(lines.length)[width + SLACK - 1];
    const cells = (buffer.screen as unknown as { lines: [number, string][][] }).lines;
    for (let r = 0; r < lines.length; r++) {
      const beyond = cells[r]!.slice(width);
      const overflow = beyond.some(([attr, ch]) => ch !== " " || attr !== blank);
      if (overflow) expect.fail(`line ${r} is wider than ${width}: ${JSON.stringify(rows[r])}`);
    }
    return rows.slice(0, lines.length);
  } finally {
    buffer.destroy();
  }
}

/** The tag-free text of lines, as the screen shows it (one string, rows joined by "\n"). */
export function screenText(lines: readonly string[], width: number): string {
  return showWithin(lines, width).join("\n");
}

/** A seeded pseudo-random source in [0, 1) (an LCG): fuzz tests repeat exactly. */
export function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
