// Raw terminal sequences (as tmux and xterm send them) → key events, bracketed paste included.
import { describe, expect, it } from "vitest";
import { createKeyParser, type KeyEvent } from "../../src/ui/keys.js";

function parse(...chunks: string[]): KeyEvent[] {
  const parser = createKeyParser();
  const out = chunks.flatMap((c) => parser.feed(c));
  return [...out, ...parser.flush()];
}

const k = (name: string, mods: { ctrl?: boolean; meta?: boolean; shift?: boolean } = {}) => ({
  type: "key",
  name,
  ctrl: mods.ctrl ?? false,
  meta: mods.meta ?? false,
  shift: mods.shift ?? false,
});

describe("key parser", () => {
  it("tells Enter (CR) from Ctrl+J (LF) and reads text", () => {
    expect(parse("hi\r")).toEqual([{ type: "text", text: "hi" }, k("enter")]);
    expect(parse("a\nb")).toEqual([
      { type: "text", text: "a" },
      k("newline"),
      { type: "text", text: "b" },
    ]);
  });

  it("reads Ctrl+arrows (xterm and rxvt) and Alt+arrows (CSI, ESC b/f, ESC ESC)", () => {
    expect(parse("\x1b[1;5A\x1b[1;5B\x1b[1;5C\x1b[1;5D")).toEqual([
      k("up", { ctrl: true }),
      k("down", { ctrl: true }),
      k("right", { ctrl: true }),
      k("left", { ctrl: true }),
    ]);
    expect(parse("\x1bOa")).toEqual([k("up", { ctrl: true })]);
    expect(parse("\x1b[1;3D\x1b[1;3C")).toEqual([
      k("left", { meta: true }),
      k("right", { meta: true }),
    ]);
    expect(parse("\x1bb\x1bf")).toEqual([k("left", { meta: true }), k("right", { meta: true })]);
    expect(parse("\x1b\x1b[D")).toEqual([k("left", { meta: true })]);
  });

  it("reads plain keys, paging, delete, Shift+Enter forms and control letters", () => {
    expect(parse("\x1b[A\x1bOB\x1b[H\x1b[F\x1b[5~\x1b[6~\x1b[3~\x7f")).toEqual([
      k("up"),
      k("down"),
      k("home"),
      k("end"),
      k("pageup"),
      k("pagedown"),
      k("delete"),
      k("backspace"),
    ]);
    expect(parse("\x1b[13;2u\x1b[27;2;13~")).toEqual([
      k("enter", { shift: true }),
      k("enter", { shift: true }),
    ]);
    expect(parse("\x03\x14")).toEqual([k("c", { ctrl: true }), k("t", { ctrl: true })]);
  });

  it("treats a lone ESC as Escape only once no sequence follows", () => {
    const parser = createKeyParser();
    expect(parser.feed("\x1b")).toEqual([]);
    expect(parser.pending()).toBe(true);
    expect(parser.flush()).toEqual([k("escape")]);
    // A sequence split across reads is joined.
    expect(parser.feed("\x1b[1;")).toEqual([]);
    expect(parser.feed("5A")).toEqual([k("up", { ctrl: true })]);
  });

  it("reads a bracketed paste whole, even split across reads, with newlines as text", () => {
    expect(parse("\x1b[200~line 1\r\nline 2\nthree\x1b[201~x")).toEqual([
      { type: "paste", text: "line 1\nline 2\nthree" },
      { type: "text", text: "x" },
    ]);
    expect(parse("\x1b[20", "0~ab\x1b[2", "01~")).toEqual([{ type: "paste", text: "ab" }]);
  });

  it("reads the mouse wheel (SGR and X10), left clicks (SGR), and ignores focus reports", () => {
    expect(
      parse("\x1b[<64;10;5M\x1b[<65;10;5M\x1b[<0;1;1M\x1b[<0;1;1m\x1b[<2;3;4M\x1b[<32;3;4M"),
    ).toEqual([
      { type: "mouse", action: "wheelup" },
      { type: "mouse", action: "wheeldown" },
      { type: "mouse", action: "click", row: 0 },
      { type: "mouse", action: "other" },
      { type: "mouse", action: "other" },
      { type: "mouse", action: "other" },
    ]);
    expect(parse("\x1b[M`!!")).toEqual([{ type: "mouse", action: "wheelup" }]);
    expect(parse("\x1b[I\x1b[O")).toEqual([]);
  });

  it("keeps multi-byte text intact", () => {
    expect(parse("日本語 🎉")).toEqual([{ type: "text", text: "日本語 🎉" }]);
  });
});
