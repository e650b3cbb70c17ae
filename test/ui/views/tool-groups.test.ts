// Tool calls and their results as people read them, on blessed's screen buffer: each call one
// group with its result beneath (parallel calls in call order, whatever order the results came
// in), nothing said twice, and each tool's result view, hostile text included.
import { describe, expect, it } from "vitest";
import type { EventRow } from "../../../src/agents/events.sql.js";
import { createScrollbackView, type ScrollEntry } from "../../../src/ui/views/index.js";
import { groupCalls } from "../../../src/ui/views/tool-group.js";
import { event } from "./fixtures.js";
import { screenText, showWithin } from "./helpers.js";

const color = { color: true };
const ev = (e: EventRow): ScrollEntry => ({ kind: "event", event: e });
const A = "a1a1a1a1-0000-4000-8000-000000000001";
const B = "b2b2b2b2-0000-4000-8000-000000000002";
const C = "c3c3c3c3-0000-4000-8000-000000000003";

const call = (id: string, name: string, args: Record<string, unknown>) =>
  ev(event("tool_call", "", { tool_call_id: id, name, arguments: JSON.stringify(args) }));
const result = (id: string, name: string, value: unknown) =>
  ev(
    event("tool_result", typeof value === "string" ? value : JSON.stringify(value), {
      tool_call_id: id,
      name,
    }),
  );

function show(
  entries: ScrollEntry[],
  options: { width?: number; spinner?: string; order?: (id: string) => number | undefined } = {},
) {
  const width = options.width ?? 70;
  const names = (id: string) => ({ [A]: "alpha", [B]: "bravo", [C]: "charlie" })[id];
  const view = createScrollbackView(color, {
    names,
    ...(options.order ? { order: options.order } : {}),
  });
  const lines = view.render(groupCalls(entries, options.spinner), width, 400, 0).lines;
  return { text: screenText(lines, width), lines, rows: showWithin(lines, width) };
}

/** A bash call with `output` and the exit code. */
const bash = (output: string, exitCode: number | null = 0, extra: Record<string, unknown> = {}) =>
  show([
    call("b", "bash", { command: "make" }),
    result("b", "bash", { exit_code: exitCode, output, ...extra }),
  ]);

describe("a call and its result are one group", () => {
  it("puts three parallel forks' results under their calls, in call order, each said once", () => {
    const fork = (id: string, name: string) => call(id, "fork", { name, prompt: `do ${name}` });
    const { text } = show([
      ev(event("assistant", "", { tool_calls: [{}, {}, {}] })),
      fork("1", "alpha"),
      fork("2", "bravo"),
      fork("3", "charlie"),
      // Results in another order than the calls, then the fork notices the batch wrote.
      result("3", "fork", { agent_id: C, name: "charlie" }),
      result("1", "fork", { agent_id: A, name: "alpha" }),
      result("2", "fork", { agent_id: B, name: "bravo" }),
      ev(event("fork", "forked alpha a1a1a1a1", { agent_id: A, name: "alpha" })),
      ev(event("fork", "forked bravo b2b2b2b2", { agent_id: B, name: "bravo" })),
      ev(event("fork", "forked charlie c3c3c3c3", { agent_id: C, name: "charlie" })),
    ]);
    expect(text).toBe(
      [
        '→ fork(name: "alpha", prompt: "do alpha")',
        "  ← ↳ alpha a1a1a1a1 inherits context",
        "",
        '→ fork(name: "bravo", prompt: "do bravo")',
        "  ← ↳ bravo b2b2b2b2 inherits context",
        "",
        '→ fork(name: "charlie", prompt: "do charlie")',
        "  ← ↳ charlie c3c3c3c3 inherits context",
      ].join("\n"),
    );
    expect(text).not.toContain("forked");
  });

  it("shows a running call's spinner in its own row until its result comes", () => {
    const entries = [
      call("1", "bash", { command: "sleep 5" }),
      call("2", "bash", { command: "ls" }),
    ];
    const running = show([...entries, result("2", "bash", { exit_code: 0, output: "a.txt" })], {
      spinner: "◷",
    });
    expect(running.text).toBe("→ bash: sleep 5\n  ◷ running\n\n→ bash: ls\n  ← a.txt");
    // Not busy (an interrupted turn): no spinner, the call alone.
    expect(show(entries).text).toBe("→ bash: sleep 5\n\n→ bash: ls");
  });

  it("says a send once: its ✉ line, no receipt", () => {
    const { text } = show([
      call("s", "send", { to: B, message: "result-bravo" }),
      result("s", "send", { status: "sent", to: B, to_name: "bravo", mail_id: 3 }),
    ]);
    expect(text).toBe("✉ to bravo b2b2b2b2: result-bravo");
  });

  it("draws an error as one ⚠ row with its code and message, beneath its call", () => {
    const long = `no agent named "zed" ${"and more words ".repeat(20)}`;
    const { rows, lines } = show(
      [
        call("s", "send", { to: "zed", message: "hi" }),
        result("s", "send", { error: { code: "UNKNOWN_AGENT", message: long } }),
      ],
      { width: 60 },
    );
    expect(rows.length).toBe(2);
    expect(rows[1]).toMatch(/^ {2}← ⚠ UNKNOWN_AGENT: no agent named "zed" and more.*…$/);
    expect(lines[1]).toContain("{red-fg}");
  });
});

describe("bash's result as its output block", () => {
  it("shows short output whole, no exit line when it succeeded", () => {
    expect(bash("one\ntwo\n").text).toBe("→ bash: make\n  ← one\n    two");
  });

  it("keeps the first and last lines of a long output and counts the rest", () => {
    const out = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join("\n");
    const { rows } = bash(out);
    expect(rows).toEqual([
      "→ bash: make",
      "  ← line 1",
      "    line 2",
      "    line 3",
      "    line 4",
      "    … 33 lines …",
      "    line 38",
      "    line 39",
      "    line 40",
    ]);
  });

  it("says (no output), and a dimmed exit code only when it is not 0", () => {
    const { rows, lines } = bash("", 1);
    expect(rows).toEqual(["→ bash: make", "  ← (no output)", "    exit 1"]);
    expect(lines[2]).toContain("{blink}exit 1{/blink}");
    expect(bash("", 0).rows).toEqual(["→ bash: make", "  ← (no output)"]);
    expect(bash("x", null, { timed_out: true }).rows.at(-1)).toBe("    timed out");
  });

  it("shows escapes literally, cuts a very long line at the width, measures wide characters", () => {
    const { rows, lines } = bash(
      `\x1b[2J{bold}red{/bold}\n${"y".repeat(5000)}\n中文😀中文😀`,
      2,
      {},
    );
    expect(rows[1]).toBe("  ← \\x1b[2J{bold}red{/bold}");
    expect(lines.join("")).not.toContain("\x1b");
    expect(rows[2]).toBe(`    ${"y".repeat(65)}…`);
    expect(rows[3]).toBe("    中文😀中文😀");
    expect(rows[4]).toBe("    exit 2");
  });
});

describe("the file tools' results as path and count", () => {
  it("reads, writes and edits", () => {
    const { text } = show([
      call("r", "read_file", { path: "src/a.ts" }),
      result("r", "read_file", { path: "src/a.ts", content: "x\n".repeat(120), total_lines: 120 }),
      call("w", "write_file", { path: "notes.md", content: "a\nb\nc\n" }),
      result("w", "write_file", { path: "notes.md", bytes: 6 }),
      call("e", "edit_file", {
        path: "src/b.ts",
        old_string: "keep\nold",
        new_string: "keep\nnew 1\nnew 2\nnew 3",
      }),
      result("e", "edit_file", { path: "src/b.ts", replacements: 1 }),
      call("g", "grep", { pattern: "TODO" }),
      result("g", "grep", {
        matches: [
          { file: "a", line: 1, text: "x" },
          { file: "b", line: 2, text: "y" },
        ],
      }),
    ]);
    expect(text).toContain('→ read_file(path: "src/a.ts")\n  ← src/a.ts 120 lines');
    expect(text).toContain("  ← notes.md wrote 3 lines");
    expect(text).toContain("  ← src/b.ts +3 −1");
    expect(text).toContain("  ← 2 matches in 2 files");
    // The file's text is the model's, not the screen's.
    expect(text).not.toContain("x\nx");
  });

  it("escapes a hostile path", () => {
    const { text } = show([
      call("r", "read_file", { path: "a" }),
      result("r", "read_file", {
        path: "\x1b]0;pwned\x07{red-fg}.ts",
        content: "",
        total_lines: 0,
      }),
    ]);
    expect(text).toContain("  ← \\x1b]0;pwned\\x07{red-fg}.ts 0 lines");
  });
});

describe("wait and unknown tools", () => {
  it("lists a fan-in's agents in fork order, whatever order the wait named them in", () => {
    const order = (id: string) => ({ [A]: 0, [B]: 1, [C]: 2 })[id];
    const value = {
      results: [
        { agent_id: C, name: "charlie", status: "received", message: "result-charlie" },
        { agent_id: A, name: "alpha", status: "received", message: "result-alpha" },
        { agent_id: B, name: "bravo", status: "dead" },
      ],
    };
    const { rows } = show(
      [call("w", "wait", { from_agents: [C, A, B] }), result("w", "wait", value)],
      {
        order,
      },
    );
    expect(rows.slice(rows.indexOf("  ← 3 agents"))).toEqual([
      "  ← 3 agents",
      "    ✓ alpha a1a1a1a1: result-alpha",
      "    ✗ bravo b2b2b2b2 dead",
      "    ✓ charlie c3c3c3c3: result-charlie",
    ]);
  });

  it("shows an MCP tool's result as compact escaped JSON, cut to a few rows", () => {
    const value = {
      items: [{ title: "\x1b[31mred\x1b[0m", body: "z".repeat(2000) }],
      wide: "中文",
    };
    const { rows, lines } = show([
      call("m", "docs__search", { q: "x" }),
      result("m", "docs__search", value),
    ]);
    expect(rows[1]).toMatch(/^ {2}← \{"items":\[\{"title":"\\u001b\[31mred/);
    expect(lines.join("")).not.toContain("\x1b");
    expect(rows.at(-1)).toMatch(/… \d+ more lines?$/);
    expect(rows.length).toBeLessThanOrEqual(10);
  });
});
