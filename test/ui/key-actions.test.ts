// The key table as a pure function: which action each key asks for, given where the keys go.
import { describe, expect, it } from "vitest";
import { editorSees, keyAction, type KeyState } from "../../src/ui/key-actions.js";
import type { KeyEvent } from "../../src/ui/keys.js";

const input: KeyState = {
  focus: "input",
  panelFiltered: false,
  denying: false,
  answering: false,
  quitArmed: false,
  page: 20,
};

const key = (name: string, mods: { ctrl?: boolean; meta?: boolean; shift?: boolean } = {}) =>
  ({ type: "key", name, ctrl: false, meta: false, shift: false, ...mods }) as KeyEvent;
const ctrl = (name: string) => key(name, { ctrl: true });
const text = (typed: string): KeyEvent => ({ type: "text", text: typed });

describe("keyAction in the input", () => {
  it("Ctrl+C interrupts and arms the quit; a second one within the window quits", () => {
    expect(keyAction(ctrl("c"), input)).toEqual({ type: "interrupt", by: "ctrl-c" });
    expect(keyAction(ctrl("c"), { ...input, quitArmed: true })).toEqual({ type: "quit" });
    expect(keyAction(key("escape"), input)).toEqual({ type: "interrupt", by: "escape" });
  });

  it("maps the Ctrl commands and the Ctrl+arrows", () => {
    expect(keyAction(ctrl("x"), input)).toEqual({ type: "stop" });
    expect(keyAction(ctrl("up"), input)).toEqual({ type: "move", direction: "parent" });
    expect(keyAction(ctrl("down"), input)).toEqual({ type: "move", direction: "child" });
    expect(keyAction(ctrl("left"), input)).toEqual({ type: "move", direction: "prev" });
    expect(keyAction(ctrl("right"), input)).toEqual({ type: "move", direction: "next" });
    expect(keyAction(ctrl("t"), input)).toEqual({ type: "open-panel" });
    expect(keyAction(ctrl("g"), input)).toEqual({ type: "oldest-request" });
    expect(keyAction(ctrl("n"), input)).toEqual({ type: "next-needing" });
    expect(keyAction(ctrl("f"), input)).toEqual({ type: "search-prompt" });
    expect(keyAction(ctrl("o"), input)).toEqual({ type: "toggle-mouse" });
    expect(keyAction(ctrl("l"), input)).toEqual({ type: "redraw" });
    expect(keyAction(ctrl("b"), input)).toEqual({ type: "none" });
  });

  it("Enter submits (Ctrl+Enter too), Tab completes, ↑↓ recall history", () => {
    expect(keyAction(key("enter"), input)).toEqual({ type: "submit" });
    expect(keyAction(key("enter", { ctrl: true }), input)).toEqual({ type: "submit" });
    expect(keyAction(key("tab"), input)).toEqual({ type: "complete" });
    expect(keyAction(key("up"), input)).toEqual({ type: "history", direction: "older" });
    expect(keyAction(key("down"), input)).toEqual({ type: "history", direction: "newer" });
  });

  it("scrolls by wheel, page and Shift+↑↓", () => {
    const scroll = (by: number) => ({ type: "view", event: { type: "scroll", by } });
    expect(keyAction({ type: "mouse", action: "wheelup" }, input)).toEqual(scroll(3));
    expect(keyAction({ type: "mouse", action: "wheeldown" }, input)).toEqual(scroll(-3));
    expect(keyAction({ type: "mouse", action: "other" }, input)).toEqual({ type: "none" });
    expect(keyAction(key("pageup"), input)).toEqual(scroll(20));
    expect(keyAction(key("pagedown"), input)).toEqual(scroll(-20));
    expect(keyAction(key("up", { shift: true }), input)).toEqual(scroll(1));
    expect(keyAction(key("down", { shift: true }), input)).toEqual(scroll(-1));
  });

  it("y / a / n answer a request only while answering; the editor does not see them then", () => {
    const answering = { ...input, answering: true };
    expect(editorSees(text("y"), answering)).toBe(false);
    expect(keyAction(text("y"), answering)).toEqual({ type: "answer", tree: false });
    expect(keyAction(text("a"), answering)).toEqual({ type: "answer", tree: true });
    expect(keyAction(text("n"), answering)).toEqual({ type: "deny-start" });
    // Typed text otherwise (or more than the one letter at once).
    expect(editorSees(text("y"), input)).toBe(true);
    expect(editorSees(text("yes"), answering)).toBe(true);
    expect(editorSees(text("x"), answering)).toBe(true);
  });

  it("while a deny reason is typed, Enter sends it and Escape cancels it", () => {
    const denying = { ...input, denying: true };
    expect(keyAction(key("enter"), denying)).toEqual({ type: "deny-send" });
    expect(keyAction(key("escape"), denying)).toEqual({ type: "deny-cancel" });
    expect(keyAction(ctrl("c"), denying)).toEqual({ type: "interrupt", by: "ctrl-c" });
  });
});

describe("keyAction in the agent panel", () => {
  const panel: KeyState = { ...input, focus: "panel" };
  const view = (event: object) => ({ type: "view", event });

  it("typing filters, ↑↓ select, Enter goes, Escape clears the filter, then closes", () => {
    expect(editorSees(text("a"), panel)).toBe(false);
    expect(keyAction(text("ab"), panel)).toEqual(view({ type: "panel-type", text: "ab" }));
    expect(keyAction(key("up"), panel)).toEqual(view({ type: "panel-move", by: -1 }));
    expect(keyAction(key("down"), panel)).toEqual(view({ type: "panel-move", by: 1 }));
    expect(keyAction(key("backspace"), panel)).toEqual(view({ type: "panel-backspace" }));
    expect(keyAction(key("enter"), panel)).toEqual({ type: "go-selected" });
    expect(keyAction(key("escape"), { ...panel, panelFiltered: true })).toEqual(
      view({ type: "panel-clear" }),
    );
    expect(keyAction(key("escape"), panel)).toEqual(view({ type: "panel-close" }));
    expect(keyAction(ctrl("t"), panel)).toEqual(view({ type: "panel-close" }));
    expect(keyAction(ctrl("c"), panel)).toEqual(view({ type: "panel-close" }));
    expect(keyAction(ctrl("g"), panel)).toEqual({ type: "oldest-request" });
    expect(keyAction(ctrl("n"), panel)).toEqual({ type: "next-needing" });
    expect(keyAction({ type: "paste", text: "x" }, panel)).toEqual({ type: "none" });
  });
});

describe("keyAction in the search result list", () => {
  it("hands every key to the list", () => {
    const search: KeyState = { ...input, focus: "search" };
    expect(editorSees(text("a"), search)).toBe(false);
    expect(keyAction(key("down"), search)).toEqual({ type: "search-key", key: key("down") });
  });
});
