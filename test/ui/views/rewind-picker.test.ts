// The /rewind picker and the folded rewound events, on blessed's screen buffer: the turns newest
// first (number, when, files, tokens, what started it cut at the end), the three ways and cancel,
// the confirmation naming what is not undone (and asking to interrupt a running agent); a run of
// rewound events as one dim line that Enter or a click opens and shuts.
import { describe, expect, it } from "vitest";
import type { TurnInfo } from "../../../src/agents/rewind.js";
import type { KeyEvent } from "../../../src/ui/keys.js";
import {
  openRewindPicker,
  rewindPickerKey,
  type RewindPicker,
} from "../../../src/ui/rewind-picker.js";
import { foldAtHand, initialView, updateView } from "../../../src/ui/view-state.js";
import { createScrollbackView, type ScrollEntry } from "../../../src/ui/views/index.js";
import { renderRewindPicker } from "../../../src/ui/views/rewind-picker.js";
import { foldKeys, foldRewound } from "../../../src/ui/views/rewound-fold.js";
import { groupCalls } from "../../../src/ui/views/tool-group.js";
import { event, NOW } from "./fixtures.js";
import { screenText, showWithin } from "./helpers.js";

const color = { color: true };
const now = new Date(NOW);

function turn(n: number, fields: Partial<TurnInfo> = {}): TurnInfo {
  return {
    turn: n,
    startEvent: n * 10,
    startedBy: "user",
    text: `message ${n}`,
    at: new Date(NOW - (10 - n) * 60_000),
    rewound: false,
    tokensIn: 1200 * n,
    tokensOut: 34 * n,
    checkpoint: undefined,
    ...fields,
  };
}

const key = (name: string): KeyEvent =>
  ({ type: "key", name, ctrl: false, meta: false, shift: false }) as KeyEvent;
const text = (t: string): KeyEvent => ({ type: "text", text: t });

function picker(fields: Partial<RewindPicker> = {}): RewindPicker {
  const turns = [
    turn(3, {
      text: "the newest: a very long first line that goes on and on past the edge of the frame\nsecond line",
      checkpoint: { files: ["a.ts", "b.ts"] } as TurnInfo["checkpoint"],
    }),
    turn(2, {
      startedBy: "mail_in",
      text: '<mail from="scout" id="5678abcd">\nfound 3\nand more\n</mail>',
    }),
    turn(1, { rewound: true }),
  ];
  return { ...openRewindPicker("agent-1", "alpha 1234abcd"), turns, ...fields };
}

function show(p: RewindPicker, running = false, width = 90, height = 12): string[] {
  return showWithin(renderRewindPicker(p, running, now, width, height, color), width + 2);
}

describe("the /rewind picker", () => {
  it("lists the turns newest first, one row each, the text cut at the end", () => {
    const rows = show(picker());
    expect(rows[0]).toMatch(/^┌─ rewind alpha 1234abcd — 3 turns · ↑↓ select · Enter choose/);
    expect(rows[1]).toMatch(
      /^│› {4}3 {2}11:53:00 +2 files +3\.6k\/102 tok +person: the newest: a very long.*…│$/,
    );
    expect(rows[1]).not.toContain("second line");
    expect(rows[2]).toMatch(
      /^│ {5}2 {2}11:52:00 .*no checkpoint .*2\.4k\/68 tok .*✉ mail from scout: found 3 +│$/,
    );
    expect(rows[3]).toMatch(/ {5}1 .*person: message 1 \(rewound\)/);
    // The selected row is drawn inverse.
    const buffer = renderRewindPicker(picker(), false, now, 90, 12, color);
    expect(buffer[1]).toContain("{inverse}");
    expect(buffer[2]).not.toContain("{inverse}");
  });

  it("says when it reads, finds nothing, or fails", () => {
    expect(show(picker({ turns: undefined })).join("\n")).toContain("reading the turns…");
    expect(show(picker({ turns: [] })).join("\n")).toContain("alpha 1234abcd has no turns");
    expect(show(picker({ error: "reading the turns failed: gone" })).join("\n")).toContain(
      "reading the turns failed: gone",
    );
  });

  it("offers files and conversation, files only, conversation only, cancel", () => {
    const rows = show(picker({ step: "choice", selected: 1, choice: 1 })).join("\n");
    expect(rows).toContain("↑↓ or 1-4");
    expect(rows).toMatch(/✉ mail from scout: found 3/);
    expect(rows).toMatch(
      /│ {3}1 files and conversation +│\n│ › 2 files only +│\n│ {3}3 conversation only +│\n│ {3}4 cancel/,
    );
  });

  it("confirms naming the mail sent and the children forked, and asks to interrupt a running agent", () => {
    const notUndone = {
      mail: [{ to: "bravo", text: "the results are in" }],
      forks: ["forked scout 5678abcd"],
    };
    const idle = show(picker({ step: "confirm", choice: 2, notUndone })).join("\n");
    expect(idle).toContain("rewind alpha 1234abcd to before turn 3 (conversation only)");
    expect(idle).toContain("not undone (already delivered or running on their own):");
    expect(idle).toContain("mail to bravo: the results are in");
    expect(idle).toContain("forked scout 5678abcd");
    expect(idle).toContain(" rewind? y/n");
    const running = show(picker({ step: "confirm", notUndone: { mail: [], forks: [] } }), true);
    expect(running.join("\n")).toContain("no mail was sent and no child forked since");
    expect(running.join("\n")).toContain("agent is running: interrupt and rewind? y/n");
  });

  it("moves with the arrows and pages, chooses with Enter, and confirms with y", () => {
    const many = picker({ turns: Array.from({ length: 30 }, (_, i) => turn(30 - i)) });
    let state = many;
    const press = (k: KeyEvent) => {
      const result = rewindPickerKey(state, k, 10);
      state = result.state;
      return result.action;
    };
    press(key("down"));
    expect(state.selected).toBe(1);
    press(key("pagedown"));
    press(key("pagedown"));
    press(key("pagedown"));
    expect(state.selected).toBe(29);
    press(key("pageup"));
    expect(state.selected).toBe(19);
    press(key("home"));
    press(key("up"));
    expect(state.selected).toBe(0);
    press(key("down"));
    press(key("enter"));
    expect(state.step).toBe("choice");
    press(key("down"));
    expect(press(key("enter"))).toMatchObject({ type: "ask", turn: { turn: 29 }, mode: "files" });
    // The not-undone list read, the confirmation: n goes back, y rewinds.
    state = { ...state, step: "confirm", notUndone: { mail: [], forks: [] } };
    expect(press(text("n"))).toEqual({ type: "none" });
    expect(state.step).toBe("choice");
    expect(press(text("3"))).toMatchObject({ type: "ask", mode: "conversation" });
    state = { ...state, step: "confirm", notUndone: { mail: [], forks: [] } };
    expect(press(text("y"))).toMatchObject({
      type: "rewind",
      turn: { turn: 29 },
      mode: "conversation",
    });
    // Cancel, and Escape from the list, close it.
    state = { ...many, step: "choice" };
    expect(press(text("4"))).toEqual({ type: "close" });
    state = many;
    expect(press(key("escape"))).toEqual({ type: "close" });
  });
});

describe("rewound events in the scrollback", () => {
  const ev = (e: ReturnType<typeof event>): ScrollEntry => ({ kind: "event", event: e });
  const at = new Date(2026, 0, 1, 14, 5);
  const history = () => {
    const rewound = { rewound_at: at };
    const call = event(
      "tool_call",
      "",
      { name: "bash", arguments: '{"command":"rm -rf build"}', tool_call_id: "c1" },
      rewound,
    );
    return [
      ev(event("user", "turn one")),
      ev(event("assistant", "answer one")),
      ev(event("user", "turn two, undone", null, rewound)),
      ev(call),
      ev(event("tool_result", "removed", { name: "bash", tool_call_id: "c1" }, rewound)),
      ev(event("assistant", "answer two, undone", null, rewound)),
      ev(event("system", "⟲ rewound to before turn 2: 4 events folded here")),
      ev(event("user", "turn three")),
    ];
  };

  it("shows a run of them as one dim line; unfolded, they follow it, dim", () => {
    const entries = history();
    const view = createScrollbackView(color);
    const folded = groupCalls(foldRewound(entries, new Set()));
    const shut = view.render(folded, 80, 40, 0);
    const text = screenText(shut.lines, 80);
    expect(text).toContain("▸ 4 events rewound at 14:05 — Enter (empty input) or click unfolds");
    expect(text).not.toContain("undone");
    expect(shut.lines.find((l) => l.includes("rewound at"))).toMatch(/^\{blink\}/);
    expect(text).toMatch(/answer one\n\n▸ 4 events rewound.*\n\n· ⟲ rewound to before turn 2/);

    const key = folded.find((e) => e.kind === "rewound")!;
    const first = key.kind === "rewound" ? key.first : -1;
    const open = groupCalls(foldRewound(entries, new Set([first])));
    const opened = view.render(open, 80, 40, 0);
    const shown = screenText(opened.lines, 80);
    expect(shown).toContain(
      "▾ 4 events rewound at 14:05 — Enter (empty input) or click folds them",
    );
    expect(shown).toMatch(
      /❯ turn two, undone\n\n→ bash: rm -rf build\n {2}← removed\n\n● answer two, undone/,
    );
    for (const line of opened.lines.filter((l) => l.includes("undone"))) {
      expect(line).toContain("{blink}");
    }
    // Each row knows its fold: the rows of the line and of the events in it.
    const foldOf = foldKeys(open);
    const rows = opened.owners.map((i) => foldOf[i]);
    const foldLine = opened.lines.findIndex((l) => l.includes("▾"));
    expect(rows[foldLine]).toBe(first);
    expect(rows[opened.lines.findIndex((l) => l.includes("answer two"))]).toBe(first);
    expect(rows[opened.lines.findIndex((l) => l.includes("turn three"))]).toBeUndefined();
  });

  it("draws an event dim once a rewind marks it, though its layout was cached before", () => {
    const view = createScrollbackView(color);
    const live = event("user", "a task");
    const before = view.render([ev(live)], 80, 10, 0).lines;
    expect(before.join("\n")).not.toContain("{blink}");
    const marked = { ...live, rewound_at: at };
    const after = view.render(foldRewound([ev(marked)], new Set([live.id])), 80, 10, 0);
    expect(after.lines.find((l) => l.includes("a task"))).toMatch(/\{blink\}.*a task/);
  });

  it("leaves a history with nothing rewound as it is", () => {
    const entries = [ev(event("user", "hello")), ev(event("assistant", "hi"))];
    expect(foldRewound(entries, new Set())).toBe(entries);
  });

  it("opens and shuts a fold by its key; Enter takes the lowest one on the screen", () => {
    let view = initialView();
    view = updateView(view, {
      type: "folds-shown",
      rows: [undefined, 7, 7, undefined, 12, -1 as never],
    });
    view = updateView(view, {
      type: "folds-shown",
      rows: [undefined, 7, undefined, 12, undefined],
    });
    expect(foldAtHand(view)).toBe(12);
    view = updateView(view, { type: "fold-toggle", key: 12 });
    expect(view.unfolded.has(12)).toBe(true);
    view = updateView(view, { type: "fold-toggle", key: 12 });
    expect(view.unfolded.has(12)).toBe(false);
    // The same rows again: the same state (a frame changes nothing).
    const same = updateView(view, {
      type: "folds-shown",
      rows: [undefined, 7, undefined, 12, undefined],
    });
    expect(same).toBe(view);
  });
});
