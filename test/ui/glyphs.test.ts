// The glyph table (src/ui/views/glyphs.ts): every glyph is in DejaVu Sans Mono (asked of
// fontconfig; fonts-dejavu-core and fontconfig are installed here when missing and this runs as
// root, else the font check is skipped, saying why), each has a one-column ASCII stand-in, and no
// view draws a non-ASCII character the table does not know.
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ASCII_FOR, asciiWanted, toAscii } from "../../src/ui/views/glyphs.js";
import { displayWidth } from "../../src/ui/views/text-width.js";

const UI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src/ui");

const has = (command: string) => spawnSync("sh", ["-c", `command -v ${command}`]).status === 0;

/** fc-list and the DejaVu fonts, installed when missing and possible; else why not. */
function fontconfig(): string | undefined {
  const installed = () =>
    has("fc-list") && execFileSync("fc-list", [":family=DejaVu Sans Mono"]).toString().trim();
  if (installed()) return undefined;
  if (process.getuid?.() === 0 && has("apt-get")) {
    spawnSync(
      "sh",
      ["-c", "apt-get update -qq && apt-get install -y -qq fonts-dejavu-core fontconfig"],
      { stdio: "ignore", timeout: 300_000 },
    );
    if (installed()) return undefined;
  }
  return "fc-list or DejaVu Sans Mono is missing (install fontconfig and fonts-dejavu-core)";
}

const missing = fontconfig();
if (missing) console.warn(`glyph font check skipped: ${missing}`);

describe("the glyph table", () => {
  it.skipIf(missing !== undefined)("has every glyph in DejaVu Sans Mono", () => {
    const absent = [...ASCII_FOR.keys()].filter((glyph) => {
      const hex = glyph.codePointAt(0)!.toString(16);
      const families = execFileSync("fc-list", [`:charset=${hex}`, "family"]).toString();
      return !families.includes("DejaVu Sans Mono");
    });
    expect(absent.map((g) => `${g} U+${g.codePointAt(0)!.toString(16)}`)).toEqual([]);
  });

  it("has a one-column ASCII stand-in for each glyph, itself one column", () => {
    for (const [glyph, ascii] of ASCII_FOR) {
      expect([...glyph], glyph).toHaveLength(1);
      expect(displayWidth(glyph), glyph).toBe(1);
      expect(ascii, glyph).toMatch(/^[\x21-\x7e]$/);
    }
  });

  it("knows every non-ASCII character the views draw", () => {
    const files = readdirSync(UI, { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".ts"),
    );
    const unknown = new Set<string>();
    for (const file of files) {
      for (const line of readFileSync(path.join(UI, file), "utf8").split("\n")) {
        // Code only: comments may name anything.
        if (/^\s*(\/\/|\*|\/\*)/.test(line)) continue;
        const code = line.replace(/\s\/\/\s.*$/, "");
        // eslint-disable-next-line no-control-regex
        for (const char of code.match(/[^\x00-\x7f]/gu) ?? []) {
          if (!ASCII_FOR.has(char)) unknown.add(`${char} in ${file}`);
        }
      }
    }
    expect([...unknown]).toEqual([]);
  });

  it("draws a painted line as ASCII, tags untouched", () => {
    const line = "{cyan-fg}● hi{/cyan-fg} ◐1 ◌0 ○2 ✗0 ── [root 1a2b3c4d] ↓2 ↳ forked … ✓";
    expect(toAscii(line)).toBe(
      "{cyan-fg}* hi{/cyan-fg} +1 ~0 o2 x0 -- [root 1a2b3c4d] v2 Y forked . v",
    );
  });

  it("is on with WARREN_ASCII=1 and on the Linux console, off otherwise", () => {
    expect(asciiWanted({ WARREN_ASCII: "1" })).toBe(true);
    expect(asciiWanted({ TERM: "linux" })).toBe(true);
    expect(asciiWanted({ TERM: "linux", WARREN_ASCII: "0" })).toBe(false);
    expect(asciiWanted({ TERM: "xterm-256color" })).toBe(false);
  });
});
