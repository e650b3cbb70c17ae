// The input editor: editing, word motion, rows and history boundaries, collapsed pastes.
import { describe, expect, it } from "vitest";
import { createInputEditor, createInputHistory } from "../../src/ui/input-editor.js";

const prompt = { text: "> " };

/** The rendered rows without tags. */
function shown(editor: ReturnType<typeof createInputEditor>, width = 40, rows = 10) {
  return editor.render(width, rows, prompt, true).lines.map((l) =>
    l
      .replace(/\{\/?(inverse|bold)\}/g, "")
      .replace(/\{open\}/g, "{")
      .replace(/\{close\}/g, "}"),
  );
}

describe("input editor", () => {
  it("edits in the middle, deletes both ways, moves by words", () => {
    const e = createInputEditor();
    e.insert("hello world");
    e.wordLeft();
    e.insert("big ");
    expect(e.value()).toBe("hello big world");
    e.home();
    e.deleteForward();
    e.end();
    e.backspace();
    expect(e.value()).toBe("ello big worl");
    e.wordLeft();
    e.wordLeft();
    e.insert("X");
    expect(e.value()).toBe("ello Xbig worl");
    e.wordRight();
    e.insert("!");
    expect(e.value()).toBe("ello Xbig! worl");
  });

  it("moves between rows; Up/Down report the first and last row", () => {
    const e = createInputEditor();
    e.insert("one");
    e.newline();
    e.insert("two");
    expect(e.down()).toBe(false);
    expect(e.up()).toBe(true);
    e.insert("+");
    expect(e.value()).toBe("one+\ntwo");
    expect(e.up()).toBe(false);
    expect(e.down()).toBe(true);
    expect(shown(e)).toEqual(["> one+", "  two "]);
  });

  it("shows a large paste collapsed and submits it whole; a small one inline", () => {
    const e = createInputEditor();
    const big = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n");
    e.insert("see: ");
    e.paste(big);
    expect(shown(e)).toEqual(["> see: [pasted 30 lines] "]);
    expect(e.value()).toBe(`see: ${big}`);
    e.clear();
    e.paste("a\nb");
    expect(e.value()).toBe("a\nb");
    expect(shown(e)).toEqual(["> a", "  b "]);
  });

  it("wraps long lines, keeps the cursor row visible, and escapes tags and control characters", () => {
    const e = createInputEditor();
    e.insert("{bold}x\x1b[2J");
    expect(shown(e)[0]).toBe("> {bold}x\\x1b[2J ");
    e.clear();
    e.insert("a".repeat(50));
    const rows = e.render(20, 2, prompt, true);
    expect(rows.rows).toBe(3);
    expect(rows.lines).toHaveLength(2);
    expect(rows.lines[1]).toContain("{inverse} {/inverse}");
  });

  it("counts wide characters as two columns", () => {
    const e = createInputEditor();
    e.insert("日本語日本語日本語");
    // 10 - 2 (prompt) - 1 (margin) = 7 columns a row: 3 wide characters, then the cursor cell.
    expect(shown(e, 10)).toEqual(["> 日本語", "  日本語", "  日本語 "]);
    e.insert("x");
    expect(shown(e, 10)).toEqual(["> 日本語", "  日本語", "  日本語x", "   "]);
  });
});

describe("the editor's own keys", () => {
  const key = (name: string, mods: { ctrl?: boolean; meta?: boolean; shift?: boolean } = {}) =>
    ({ type: "key", name, ctrl: false, meta: false, shift: false, ...mods }) as const;

  it("takes text, pastes, editing and motion; leaves Enter, Ctrl commands and scrolling", () => {
    const e = createInputEditor();
    expect(e.handleKey({ type: "text", text: "ab" })).toBe(true);
    expect(e.handleKey(key("enter", { shift: true }))).toBe(true);
    expect(e.handleKey({ type: "paste", text: "c" })).toBe(true);
    expect(e.value()).toBe("ab\nc");
    expect(e.handleKey(key("up"))).toBe(true); // to the first row
    expect(e.handleKey(key("up"))).toBe(false); // on it already: history is the app's
    expect(e.handleKey(key("left", { meta: true }))).toBe(true);
    expect(e.handleKey(key("u", { ctrl: true }))).toBe(true);
    expect(e.value()).toBe("");
    for (const other of [
      key("enter"),
      key("tab"),
      key("escape"),
      key("pageup"),
      key("up", { shift: true }),
      key("left", { ctrl: true }),
      key("t", { ctrl: true }),
    ]) {
      expect(e.handleKey(other)).toBe(false);
    }
    expect(e.handleKey({ type: "mouse", action: "wheelup" })).toBe(false);
  });
});

describe("input history", () => {
  it("recalls older entries, then newer, then the draft", () => {
    const h = createInputHistory();
    h.add("first");
    h.add("second");
    expect(h.older("draft")).toBe("second");
    expect(h.older("second")).toBe("first");
    expect(h.older("first")).toBeUndefined();
    expect(h.newer()).toBe("second");
    expect(h.newer()).toBe("draft");
    expect(h.newer()).toBeUndefined();
  });
});
