// A child's final answer in the receiver's scrollback, on blessed's screen buffer: marked
// "(final)" beside the sender's name wherever it arrives (a mail_in event, a wait's one mail, a
// fan-in's entry), its structured result drawn as fields, ordinary and older mail as before; the
// mark reads the same in ASCII mode (TERM=linux) and takes the theme's color.
import { describe, expect, it } from "vitest";
import type { EventRow } from "../../../src/agents/events.sql.js";
import { createScrollbackView, toAscii, type ScrollEntry } from "../../../src/ui/views/index.js";
import { event } from "./fixtures.js";
import { screenText } from "./helpers.js";

const CHILD = "c0ffee00-1111-4222-8333-444455556666";
const OTHER = "b2b2b2b2-0000-4000-8000-000000000002";
const ev = (e: EventRow): ScrollEntry => ({ kind: "event", event: e });

function lines(entries: ScrollEntry[], width = 60, color = true): string[] {
  return createScrollbackView({ color }).render(entries, width, 400, 0).lines;
}
const show = (entries: ScrollEntry[], width = 60) => screenText(lines(entries, width), width);

/** A mail_in event as the end of a turn writes it (runtime/turn-end.ts). */
function mailIn(from: string, name: string, message: string, extra: Record<string, unknown> = {}) {
  return ev(
    event("mail_in", `<mail from="${name}">${message}</mail>`, {
      mail_id: 1,
      from,
      from_name: name,
      message,
      ...extra,
    }),
  );
}

const waitResult = (value: unknown) =>
  ev(event("tool_result", JSON.stringify(value), { name: "wait" }));

describe("a child's final mail in the scrollback", () => {
  it("marks a final mail_in beside the sender and leaves ordinary mail as it was", () => {
    const text = show([
      mailIn(CHILD, "scout", "found 3 bugs", { final: true }),
      mailIn(OTHER, "bravo", "still looking"),
      // Written before mail_in events said whether they were final: drawn as before.
      ev(event("mail_in", `Mail from scout (${CHILD}): old news`, { from: CHILD })),
    ]);
    expect(text).toBe(
      "✉ from scout c0ffee00 (final): found 3 bugs\n\n" +
        "✉ from bravo b2b2b2b2: still looking\n\n" +
        "✉ from scout c0ffee00: old news",
    );
  });

  it("draws a structured result as its fields, not its JSON", () => {
    const result = { verdict: "pass", bugs: 3, files: ["a.ts", "b.ts"] };
    const text = show([mailIn(CHILD, "scout", JSON.stringify(result), { final: true, result })]);
    expect(text).toBe(
      "✉ from scout c0ffee00 (final):\n" +
        "  verdict: pass\n" +
        "  bugs: 3\n" +
        '  files: ["a.ts","b.ts"]',
    );
    expect(text).not.toContain("{");
  });

  it("marks a wait's final mail and a fan-in's final entry, not the others", () => {
    const text = show(
      [
        waitResult({ from: CHILD, from_name: "scout", message: "all done", final: true }),
        waitResult({ from: OTHER, from_name: "bravo", message: "an update" }),
        waitResult({
          results: [
            {
              agent_id: CHILD,
              name: "scout",
              status: "received",
              message: '{"ok":true,"count":2}',
              final: true,
              result: { ok: true, count: 2 },
            },
            { agent_id: OTHER, name: "bravo", status: "received", message: "partial" },
          ],
        }),
      ],
      70,
    );
    expect(text).toBe(
      "  ← ✉ from scout c0ffee00 (final): all done\n\n" +
        "  ← ✉ from bravo b2b2b2b2: an update\n\n" +
        "  ← 2 agents\n" +
        "    ✓ scout c0ffee00 (final):\n" +
        "      ok: true\n" +
        "      count: 2\n" +
        "    ✓ bravo b2b2b2b2: partial",
    );
  });

  it("reads as plain words in ASCII mode and colors the mark", () => {
    const drawn = lines([mailIn(CHILD, "scout", "done", { final: true })]);
    expect(screenText(drawn.map(toAscii), 60)).toBe("@ from scout c0ffee00 (final): done");
    expect(drawn[0]).toContain("{bold}{green-fg}final{/green-fg}{/bold}");
    // Without color the word is the mark.
    const plain = lines([mailIn(CHILD, "scout", "done", { final: true })], 60, false);
    expect(screenText(plain, 60)).toBe("✉ from scout c0ffee00 (final): done");
  });
});
