// The scrollback view on blessed's screen buffer: every glyph, hostile text shown literally, long
// output collapsed, and a frame that lays out only the window of a 10,000-event history.
import { describe, expect, it } from "vitest";
import type { EventRow } from "../../../src/agents/events.sql.js";
import { createScrollbackView, type ScrollEntry } from "../../../src/ui/views/index.js";
import { event } from "./fixtures.js";
import { screenText, showWithin } from "./helpers.js";

const color = { color: true };
const ev = (e: EventRow): ScrollEntry => ({ kind: "event", event: e });
const CHILD = "c0ffee00-1111-4222-8333-444455556666";

function show(entries: ScrollEntry[], width = 60, height = 400): string {
  const view = createScrollbackView(color);
  return screenText(view.render(entries, width, height, 0).lines, width);
}

describe("scrollback glyphs", () => {
  it("shows each kind of event with its glyph", () => {
    const text = show([
      ev(event("user", "hello there")),
      ev(event("assistant", "hi! how can I help?")),
      ev(event("tool_call", "", { name: "bash", arguments: '{"command":"ls -la"}' })),
      ev(event("tool_call", "", { name: "read_file", arguments: '{"path":"src/a.ts"}' })),
      ev(event("tool_result", "file-a\nfile-b", { name: "bash" })),
      ev(event("error", "model: 401 unauthorized")),
      ev(event("interrupted", "interrupted by the person")),
      ev(event("killed", "killed by agent 1234abcd", { by: "1234abcd-0000" })),
      ev(event("capture", "task: count the files")),
      ev(
        event("mail_in", `Mail from scout (${CHILD}): found 3`, {
          from: CHILD,
          from_name: "scout",
        }),
      ),
      ev(event("mail_in", "Mail from the person: hi", { from: null, from_name: "human" })),
      ev(
        event("tool_call", "", { name: "send", arguments: '{"to":"parent","message":"done: 42"}' }),
      ),
      ev(event("mail_out", "done", { to: CHILD, to_name: "scout", message: "more work" })),
      ev(event("fork", "forked scout c0ffee00", { agent_id: CHILD, name: "scout" })),
      ev(event("command", "/kill scout")),
      ev(event("system", "model set to gpt-x")),
    ]);
    for (const expected of [
      "❯ hello there",
      "● hi! how can I help?",
      "→ bash: ls -la",
      '→ read_file(path: "src/a.ts")',
      "  ← file-a\n    file-b",
      "⚠ model: 401 unauthorized",
      "⚠ interrupted by the person",
      "⚠ killed by agent 1234abcd",
      "✎ captured — no model sees this\n│ task: count the files",
      "✉ from scout c0ffee00: found 3",
      "✉ from human: hi",
      "✉ to parent: done: 42",
      "✉ to scout c0ffee00: more work",
      "↳ forked scout c0ffee00",
      "» /kill scout",
      "· model set to gpt-x",
    ]) {
      expect(text).toContain(expected);
    }
    // One blank line between entries.
    expect(text).toContain("❯ hello there\n\n● hi! how can I help?");
  });

  it("colors captured text apart from messages", () => {
    const view = createScrollbackView(color);
    const lines = view.render(
      [ev(event("capture", "secret plan")), ev(event("user", "plain"))],
      40,
      10,
      0,
    ).lines;
    expect(lines[0]).toContain("{magenta-fg}");
    expect(lines.at(-1)).not.toContain("magenta");
  });

  it("collapses long tool output and says how much is hidden", () => {
    const output = Array.from({ length: 500 }, (_, i) => `row ${i}`).join("\n");
    const text = show([ev(event("tool_result", output, { name: "bash" }))]);
    expect(text).toContain("row 0");
    expect(text).toContain("row 7");
    expect(text).not.toContain("row 8");
    expect(text).toContain("… 492 more lines");
  });

  it("shows a tool error's code and message", () => {
    const text = show([
      ev(
        event("tool_result", '{"error":{"code":"AGENT_DEAD","message":"scout is dead"}}', {
          name: "send",
          code: "AGENT_DEAD",
        }),
      ),
    ]);
    expect(text).toContain("← ⚠ AGENT_DEAD: scout is dead");
  });

  it("shows a stream with its thinking and a cursor, notices and queued input", () => {
    const text = show([
      { kind: "stream", agentId: CHILD, text: "partial answer", reasoning: "let me think" },
      { kind: "notice", id: 1, level: "error", text: "unknown command: /frob" },
      { kind: "notice", id: 2, level: "info", text: "Keys\n  Enter  send" },
      { kind: "pending", id: 3, text: "and then?" },
    ]);
    expect(text).toContain("  let me think\n● partial answer▍");
    expect(text).toContain("⚠ unknown command: /frob");
    expect(text).toContain("· Keys\n    Enter  send");
    expect(text).toContain("❯ and then?\n  ◌ queued");
  });

  it("dims thinking and drops all color without color", () => {
    const dimmed = createScrollbackView(color).render(
      [{ kind: "stream", agentId: CHILD, text: "x", reasoning: "hmm" }],
      40,
      10,
      0,
    ).lines;
    expect(dimmed[0]).toContain("{blink}hmm");
    const plain = createScrollbackView({ color: false }).render(
      [
        ev(event("error", "bad")),
        ev(event("capture", "c")),
        { kind: "stream", agentId: CHILD, text: "x", reasoning: "hmm" },
      ],
      40,
      20,
      0,
    ).lines;
    expect(plain.join("\n")).not.toMatch(/-fg\}|-bg\}/);
  });

  it("skips an assistant message that only called tools", () => {
    const text = show([
      ev(event("user", "go")),
      ev(event("assistant", "", { tool_calls: [{ id: "1", name: "bash", arguments: "{}" }] })),
      ev(event("tool_call", "", { name: "bash", arguments: '{"command":"true"}' })),
    ]);
    expect(text).toBe("❯ go\n\n→ bash: true");
  });
});

describe("hostile text", () => {
  const hostile = "x\x1b[2J\x1b]0;pwned\x07 {bold}x{/bold} a\u0000b";

  it("shows control characters, escapes and tags literally, in every kind", () => {
    const kinds: ScrollEntry[] = [
      ev(event("user", hostile)),
      ev(event("assistant", hostile)),
      ev(event("tool_result", hostile, { name: "bash" })),
      ev(event("tool_call", "", { name: "bash", arguments: JSON.stringify({ command: hostile }) })),
      ev(event("capture", hostile)),
      ev(
        event("mail_in", `Mail from ${hostile} (${CHILD}): ${hostile}`, {
          from: CHILD,
          from_name: hostile,
        }),
      ),
      ev(event("error", hostile)),
      { kind: "stream", agentId: CHILD, text: hostile, reasoning: hostile },
      { kind: "notice", id: 1, level: "error", text: hostile },
    ];
    for (const entry of kinds) {
      const view = createScrollbackView(color);
      const lines = view.render([entry], 200, 50, 0).lines;
      const text = screenText(lines, 200);
      expect(text).toContain("x\\x1b[2J\\x1b]0;pwned\\x07 {bold}x{/bold} a\\x00b");
      // eslint-disable-next-line no-control-regex -- no raw control character may reach blessed
      expect(lines.join("")).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    }
  });

  it("writes no agent escape sequence to the terminal", async () => {
    const { createScreenBuffer } = await import("../screen-buffer.js");
    const buffer = createScreenBuffer(80, 10);
    const view = createScrollbackView(color);
    buffer.show(view.render([ev(event("user", hostile))], 80, 10, 0).lines);
    await new Promise((resolve) => setTimeout(resolve, 20)); // blessed flushes on a later tick
    expect(buffer.output()).not.toContain("pwned\x07");
    expect(buffer.output()).not.toContain("\x1b]0;pwned");
    expect(buffer.output()).toContain("pwned\\x07");
    buffer.destroy();
  });

  it("wraps CJK, emoji and long words without passing the width", () => {
    const text =
      "中文字符和表情😀👍🏽 mixed with averyveryveryveryverylongwordthatmustbreak é e\u0301 ".repeat(
        4,
      );
    for (const width of [12, 17, 40, 61]) {
      const view = createScrollbackView(color);
      const lines = view.render(
        [ev(event("assistant", text)), ev(event("tool_result", text))],
        width,
        500,
        0,
      ).lines;
      const rows = showWithin(lines, width);
      const joined = rows.join("").replace(/\s+/g, "");
      expect(joined).toContain("中文字符和表情😀👍🏽");
      expect(joined).toContain("averyveryveryveryverylongwordthatmustbreak");
    }
  });
});

describe("the virtual list", () => {
  const history = (n: number): ScrollEntry[] =>
    Array.from({ length: n }, (_, i) =>
      ev(
        event(i % 2 ? "assistant" : "user", `message number ${i} ${"word ".repeat(i % 7)}`, null, {
          id: i + 1,
        }),
      ),
    );

  it("lays out only the window of a 10,000-event history", () => {
    const entries = history(10_000);
    const laidOut: string[] = [];
    const view = createScrollbackView(color, { onLayout: (key) => laidOut.push(key) });
    const first = view.render(entries, 80, 30, 0);
    expect(first.lines).toHaveLength(30);
    expect(laidOut.length).toBeGreaterThan(0);
    expect(laidOut.length).toBeLessThanOrEqual(30);
    expect(screenText(first.lines, 80)).toContain("message number 9999");
    expect(first.atTop).toBe(false);
    // The same frame again is all cache hits.
    laidOut.length = 0;
    view.render(entries, 80, 30, 0);
    expect(laidOut).toEqual([]);
    // Scrolling up one page lays out about one page more.
    view.render(entries, 80, 30, 30);
    expect(laidOut.length).toBeLessThanOrEqual(30);
    expect(view.cacheSize).toBeLessThanOrEqual(60);
  });

  it("keeps the cache bounded", () => {
    const view = createScrollbackView(color, { cacheSize: 50 });
    const entries = history(400);
    for (let scroll = 0; scroll < 800; scroll += 40) view.render(entries, 80, 40, scroll);
    expect(view.cacheSize).toBeLessThanOrEqual(50);
  });

  it("rewraps when the width changes", () => {
    const long = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu";
    const entries = [ev(event("user", long, null, { id: 1 }))];
    const laidOut: number[] = [];
    const view = createScrollbackView(color, { onLayout: (_key, width) => laidOut.push(width) });
    const wide = view.render(entries, 80, 10, 0).lines;
    const narrow = view.render(entries, 30, 10, 0).lines;
    expect(wide).toHaveLength(1);
    expect(narrow.length).toBeGreaterThan(2);
    showWithin(narrow, 30);
    expect(laidOut).toEqual([80, 30]);
    expect(screenText(narrow, 30).replace(/\n\s*/g, " ")).toBe(`❯ ${long}`);
  });

  it("scrolls, clamps to the top and says when the oldest entry is visible", () => {
    const entries = history(20);
    const view = createScrollbackView(color);
    const bottom = view.render(entries, 80, 5, 0);
    expect(bottom.atTop).toBe(false);
    expect(screenText(bottom.lines, 80)).toContain("message number 19");
    const top = view.render(entries, 80, 5, 10_000);
    expect(top.atTop).toBe(true);
    expect(top.maxScroll).toBe(20 + 19 - 5); // 20 one-line entries, 19 blank lines between
    expect(screenText(top.lines, 80).split("\n")[0]).toContain("message number 0");
    // Before the top has been laid out, maxScroll is a lower bound that lets you scroll on.
    expect(bottom.maxScroll).toBeGreaterThan(0);
    expect(bottom.maxScroll).toBeLessThanOrEqual(top.maxScroll);
  });

  it("follows a growing stream and forgets a changed event", () => {
    const laidOut: string[] = [];
    const view = createScrollbackView(color, { onLayout: (key) => laidOut.push(key) });
    const base = [ev(event("user", "q", null, { id: 1 }))];
    const a = view.render(
      [...base, { kind: "stream", agentId: CHILD, text: "one", reasoning: "" }],
      40,
      10,
      0,
    );
    const b = view.render(
      [...base, { kind: "stream", agentId: CHILD, text: "one two", reasoning: "" }],
      40,
      10,
      0,
    );
    expect(screenText(a.lines, 40)).toContain("● one▍");
    expect(screenText(b.lines, 40)).toContain("● one two▍");
    expect(laidOut).toEqual([`s${CHILD}`, "e1", `s${CHILD}`]);
    view.forget(1);
    view.render(base, 40, 10, 0);
    expect(laidOut.at(-1)).toBe("e1");
  });
});

describe("tool results read as what they mean", () => {
  const A = "a1a1a1a1-0000-4000-8000-000000000001";
  const B = "b2b2b2b2-0000-4000-8000-000000000002";

  it("shows a fan-in wait as one row per agent with its status", () => {
    const result = {
      results: [
        { agent_id: A, name: "alpha", status: "received", message: "found 3 bugs\nsee below" },
        { agent_id: B, name: "bravo", status: "dead", changes: { files: 2, added: 9, removed: 1 } },
      ],
    };
    const text = show([ev(event("tool_result", JSON.stringify(result), { name: "wait" }))]);
    expect(text).toBe(
      "  ← 2 agents\n    ✓ alpha a1a1a1a1: found 3 bugs\n      see below\n    ✗ bravo b2b2b2b2 (2 files +9 -1) dead",
    );
  });

  it("shows a wait's mail, its timeout and a send's receipt", () => {
    const text = show([
      ev(
        event("tool_result", JSON.stringify({ from: A, from_name: "alpha", message: "hi" }), {
          name: "wait",
        }),
      ),
      ev(
        event("tool_result", JSON.stringify({ from: "human", from_name: "human", message: "yo" }), {
          name: "wait",
        }),
      ),
      ev(event("tool_result", '{"status":"timeout"}', { name: "wait" })),
      ev(
        event(
          "tool_result",
          JSON.stringify({ status: "sent", to: B, to_name: "bravo", mail_id: 4 }),
          { name: "send" },
        ),
      ),
      ev(event("tool_result", JSON.stringify({ agent_id: A, name: "alpha" }), { name: "fork" })),
      ev(event("tool_result", JSON.stringify({ killed: [A, B] }), { name: "kill" })),
    ]);
    expect(text).toBe(
      "  ← ✉ from alpha a1a1a1a1: hi\n\n  ← ✉ from human: yo\n\n  ← timed out, no mail\n\n" +
        // The send's receipt draws nothing: its call's ✉ line says it.
        "  ← ↳ alpha a1a1a1a1 inherits context\n\n  ← killed a1a1a1a1, b2b2b2b2",
    );
  });
});

describe("huge messages", () => {
  it("shows the first rows of a megabyte message and says how much is hidden", () => {
    const huge = Array.from({ length: 20_000 }, (_, i) => `line ${i} ${"x".repeat(40)}`).join("\n");
    for (const kind of ["user", "assistant", "capture"] as const) {
      const view = createScrollbackView(color);
      const lines = view.render([ev(event(kind, huge))], 80, 100_000, 0).lines;
      expect(lines.length).toBeLessThanOrEqual(402);
      const text = screenText(lines, 80);
      expect(text).toContain("line 0 ");
      expect(text).toMatch(/… 19[56]\d\d more lines/);
    }
  });
});
