// A streaming answer is wrapped on from where its last layout stopped: whatever the text and however
// it arrives in pieces, the lines must be those of wrapping the whole text at once (seeded, repeatable).
import { describe, expect, it } from "vitest";
import {
  createScrollbackView,
  renderEntry,
  renderStream,
  type StreamProgress,
} from "../../../src/ui/views/index.js";
import { random } from "./helpers.js";

const PIECES = [
  "word",
  "lorem",
  " ",
  "   ",
  "\n",
  "\n\n",
  "\t",
  "中文",
  "😀",
  "👍🏽",
  "e\u0301",
  "\x1b[2J",
  "{bold}",
  "averyveryveryverylongwordwithoutspacesthatislongerthanarow",
  "…",
];

const stream = (text: string, reasoning = "") =>
  ({ kind: "stream", agentId: "a", text, reasoning }) as const;
const theme = { color: true };

describe("a stream wrapped as it grows", () => {
  it("gives the lines of the whole text wrapped at once, for text arriving in random pieces", () => {
    const next = random(7);
    for (let round = 0; round < 60; round++) {
      const width = 4 + Math.floor(next() * 80);
      const reasoning = next() < 0.3 ? "thinking about it" : "";
      let text = "";
      let progress: StreamProgress | undefined;
      const deltas = 1 + Math.floor(next() * 40);
      for (let d = 0; d < deltas; d++) {
        // A delta is a few pieces, or a piece cut in two (a word arriving in halves).
        const piece = PIECES[Math.floor(next() * PIECES.length)]!;
        const cut = next() < 0.3 ? Math.floor(next() * piece.length) : piece.length;
        text += piece.slice(0, cut);
        if (cut < piece.length) text += piece.slice(cut);
        const laid = renderStream(stream(text, reasoning), width, theme, progress);
        expect(laid.lines, `width ${width}, text ${JSON.stringify(text)}`).toEqual(
          renderEntry(stream(text, reasoning), width, theme),
        );
        progress = laid.progress;
      }
    }
  });

  it("starts over when the text does not extend the last one, or the width changed", () => {
    const first = renderStream(stream("one two three four five six"), 12, theme);
    const edited = renderStream(stream("one TWO three"), 12, theme, first.progress);
    expect(edited.lines).toEqual(renderEntry(stream("one TWO three"), 12, theme));
    const wider = renderStream(stream("one two three four five six"), 30, theme, first.progress);
    expect(wider.lines).toEqual(renderEntry(stream("one two three four five six"), 30, theme));
  });

  it("wraps only what was appended since the last frame", () => {
    const view = createScrollbackView(theme);
    let text = "lorem ipsum dolor sit amet ".repeat(2000);
    view.render([stream(text)], 120, 40, 0);
    // Wrapping the whole 54,000 characters again takes milliseconds; going on from the last
    // layout takes a small part of that (compared on this machine, not against a fixed time).
    const whole = fastest(() => renderEntry(stream(`${text}consectetur`), 120, theme));
    const onward = fastest(() => {
      text += "consectetur ";
      view.render([stream(text)], 120, 40, 0);
    });
    expect(onward).toBeLessThan(whole / 3);
  });
});

/** The fastest of a few runs of `action`, in ms. */
function fastest(action: () => void): number {
  let best = Infinity;
  for (let i = 0; i < 7; i++) {
    const start = performance.now();
    action();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}
