// Each of warren's patches to blessed (src/ui/views/blessed-*.ts; the list is in
// docs/architecture.md, "blessed's patches") does what blessed would not: a real layout on a fake
// terminal, its screen buffer and what the terminal was sent. Every test here failed with its
// patch removed.
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLayout, type Frame, type Layout } from "../../src/ui/layout.js";
import { screenCells, writePassthrough } from "../../src/ui/views/blessed-lib.js";

interface Opened {
  layout: Layout;
  /** What the terminal was sent so far. */
  output(): string;
  /** The column of the cell holding `ch` on screen row `y` (-1: none). */
  column(y: number, ch: string): number;
}

const opened: Opened[] = [];
afterEach(() => {
  for (const o of opened.splice(0)) o.layout.destroy();
});

function open(columns = 30, rows = 12): Opened {
  let written = "";
  const output = Object.assign(new PassThrough(), { isTTY: true, columns, rows });
  output.on("data", (chunk: Buffer) => (written += chunk.toString("utf8")));
  const layout = createLayout({
    output: output as unknown as NodeJS.WriteStream,
    terminal: "xterm-256color",
  });
  const o: Opened = {
    layout,
    output: () => written,
    column: (y, ch) => (screenCells(layout.screen)[y] ?? []).findIndex((cell) => cell[1] === ch),
  };
  opened.push(o);
  return o;
}

function frame(scrollback: string[], parts: Partial<Frame> = {}): Frame {
  return {
    scrollback,
    statusLayer: [],
    spinner: "",
    separator: "",
    input: [""],
    statusBar: "",
    ...parts,
  };
}

/** blessed writes a frame to the terminal on the next turn of the loop. */
const flushed = () => new Promise((resolve) => setImmediate(resolve));

describe("blessed-lib.ts's patches", () => {
  it("Program's constructor: inside tmux, no `tmux -V` is run; writes still go through tmux", async () => {
    const dir = path.join(os.tmpdir(), `warren-tmux-${randomUUID()}`);
    fs.mkdirSync(dir);
    const ran = path.join(dir, "ran");
    fs.writeFileSync(path.join(dir, "tmux"), `#!/bin/sh\necho "$@" > '${ran}'\necho "tmux 3.4"\n`, {
      mode: 0o755,
    });
    const env = { TMUX: process.env.TMUX, PATH: process.env.PATH };
    process.env.TMUX = "/tmp/tmux-test/default,1,0";
    process.env.PATH = `${dir}${path.delimiter}${env.PATH ?? ""}`;
    try {
      const o = open();
      o.layout.paint(frame(["hello"]));
      await flushed();
      writePassthrough(o.layout.screen, "\x1b]9;done\x07");
      await flushed();
      expect(fs.existsSync(ran)).toBe(false);
      expect(o.output()).toContain("\x1bPtmux;\x1b\x1b]9;done\x07\x1b\\");
    } finally {
      for (const [key, value] of Object.entries(env)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("Tput's brokenACS: line characters go out as UTF-8, never through ACS", async () => {
    const o = open();
    o.layout.paint(frame(["a──b"], { separator: "────────" }));
    await flushed();
    expect(o.output()).toContain("a──b");
    expect(o.output()).toContain("────────");
    expect(o.output()).not.toContain("\x1b(0");
  });

  it("Program.prototype._owrite: dim (tagged blink) goes out as SGR 2", async () => {
    const o = open();
    o.layout.paint(frame(["{blink}quiet{/blink} loud"]));
    await flushed();
    expect(o.output()).toContain("\x1b[2mquiet");
    expect(o.output()).not.toContain("\x1b[5m");
  });
});

describe("blessed-terminfo.ts's patch", () => {
  it("Tput.prototype._compile: a screen compiles only the capabilities it uses", () => {
    // blessed compiles each capability with `new Function`.
    const RealFunction = globalThis.Function;
    let compiled = 0;
    globalThis.Function = new Proxy(RealFunction, {
      construct(target, args: unknown[]) {
        compiled++;
        return Reflect.construct(target, args) as object;
      },
    });
    try {
      open();
    } finally {
      globalThis.Function = RealFunction;
    }
    expect(compiled).toBeLessThan(40);
  });
});

describe("blessed-widths.ts's patches", () => {
  it("unicode.chars.all: an emoji gets a spare cell, so what follows is two columns on", () => {
    const o = open();
    o.layout.paint(frame(["😀x", "中y"]));
    expect(o.column(0, "x")).toBe(2);
    expect(o.column(1, "y")).toBe(2);
  });

  it("unicode.charWidth: an emoji's spare cell is not sent to the terminal", async () => {
    const o = open();
    o.layout.paint(frame(["😀x"]));
    await flushed();
    // The terminal itself moves two columns for the emoji.
    expect(o.output()).toContain("😀x");
    expect(o.output()).not.toContain("\x03");
  });

  it("unicode.combining: a skin tone joins the cell of the character before it", () => {
    const o = open();
    o.layout.paint(frame(["👍🏽x", "e\u0301y"]));
    expect(o.column(0, "x")).toBe(2);
    expect(o.column(1, "y")).toBe(1);
  });

  it("Element.prototype._wrapContent: a line wider than its box is cut by cells", () => {
    const o = open(10, 6);
    o.layout.paint(frame(["😀".repeat(8), "ab"]));
    expect(o.layout.screenText()[0]).toBe("😀".repeat(5));
  });
});

/** The element prototype, to count what blessed's own steps are asked to do. */
const element = (
  createRequire(import.meta.url)("blessed/lib/widgets/element.js") as {
    prototype: { _parseTags(text: string): string };
  }
).prototype;

describe("blessed-parse.ts's and blessed-rows.ts's patches", () => {
  const rows = Array.from({ length: 25 }, (_, i) => `{red-fg}row ${i}{/red-fg} of the panel`);
  const scrolled = [...rows.slice(1), "{red-fg}row 25{/red-fg} of the panel"];

  it("Element.prototype.parseContent: only the lines that changed are parsed", () => {
    const o = open(40, 30);
    o.layout.paint(frame(rows));
    const tags = vi.spyOn(element, "_parseTags");
    try {
      o.layout.paint(frame(scrolled));
      const parsed = tags.mock.calls.map(([text]) => text).join("\n");
      expect(parsed.match(/row \d+/g)).toEqual(["row 25"]);
    } finally {
      tags.mockRestore();
    }
    expect(o.layout.screenText()[23]?.trimEnd()).toBe("row 24 of the panel");
  });

  it("Element.prototype.render, per box: only the rows whose text changed are drawn", () => {
    const o = open(40, 30);
    o.layout.paint(frame(rows));
    o.layout.paint(frame(scrolled));
    const screen = o.layout.screen as unknown as { attrCode(...args: unknown[]): number };
    const attrCode = vi.spyOn(screen, "attrCode");
    // One row's text changed; the other 24 rows' 48 colour sequences are not read again.
    const changed = [...scrolled];
    changed[10] = "{red-fg}row ten{/red-fg} of the panel";
    o.layout.paint(frame(changed));
    expect(attrCode.mock.calls.length).toBeLessThanOrEqual(4);
    expect(o.layout.screenText()[10]?.trimEnd()).toBe("row ten of the panel");
  });
});
