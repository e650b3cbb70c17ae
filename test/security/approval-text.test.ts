// What a person approves is what runs (issue 38 §3, §5): the text an approval draws
// (src/text/escape.ts visibleLines, used by the TUI's block and `warren approvals`) shows a real
// newline as a line break with its mark, keeps a typed backslash as typed, and draws every
// invisible character (one generator per class) and every look-alike letter inside a
// Latin-looking word as its code. Nothing is dropped: the drawing decodes back to the text.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LATIN_LOOKALIKE } from "../../src/text/confusables.js";
import { NEWLINE_MARK, visibleLines, visibleText } from "../../src/text/escape.js";

const RUNS = { numRuns: 300, seed: 38 };

/** Code points from inclusive ranges. */
function from(...ranges: [number, number][]): fc.Arbitrary<string> {
  return fc
    .oneof(...ranges.map(([lo, hi]) => fc.integer({ min: lo, max: hi })))
    .map((cp) => String.fromCodePoint(cp));
}

/** The invisible classes and a generator of each (issue 38 §3). */
const CLASSES: Record<string, fc.Arbitrary<string>> = {
  "C0 and C1 controls, DEL": from([0x00, 0x09], [0x0b, 0x1f], [0x7f, 0x9f]),
  "zero-width (U+200B-200F, U+2060, U+FEFF)": from(
    [0x200b, 0x200f],
    [0x2060, 0x2060],
    [0xfeff, 0xfeff],
  ),
  "bidi (U+202A-E, U+2066-9, U+061C)": from([0x202a, 0x202e], [0x2066, 0x2069], [0x061c, 0x061c]),
  "tags (U+E0000-E007F)": from([0xe0000, 0xe007f]),
  "variation selectors": from([0xfe00, 0xfe0f], [0xe0100, 0xe01ef], [0x180b, 0x180d]),
  "other format (Cf): soft hyphen, invisible operators, …": from(
    [0x00ad, 0x00ad],
    [0x2061, 0x2064],
    [0x206a, 0x206f],
    [0x180e, 0x180e],
    [0xfff9, 0xfffb],
  ),
  "line and paragraph separators": from([0x2028, 0x2029]),
  "spaces other than U+0020": from(
    [0x00a0, 0x00a0],
    [0x2000, 0x200a],
    [0x202f, 0x202f],
    [0x205f, 0x205f],
    [0x3000, 0x3000],
    [0x1680, 0x1680],
  ),
  "fillers and other default-ignorables": from(
    [0x115f, 0x1160],
    [0x3164, 0x3164],
    [0xffa0, 0xffa0],
    [0x034f, 0x034f],
  ),
  "private use": from([0xe000, 0xf8ff], [0xf0000, 0xf0010]),
};

/** Printable ASCII without the backslash (so a decoded escape cannot come from typed text). */
const plain = fc.string({
  unit: fc
    .integer({ min: 0x20, max: 0x7e })
    .filter((c) => c !== 0x5c)
    .map((c) => String.fromCharCode(c)),
});

/** The drawing decoded: codes back to characters, each line's mark back to a newline. */
function decode(lines: string[]): string {
  return lines
    .map((line) => (line.endsWith(NEWLINE_MARK) ? line.slice(0, -1) + "\n" : line))
    .join("")
    .replace(/\\u\{([0-9a-f]+)\}|\\u([0-9a-f]{4})|\\x([0-9a-f]{2})|\\t|\\r/g, (code, a, b, c) =>
      code === "\\t"
        ? "\t"
        : code === "\\r"
          ? "\r"
          : String.fromCodePoint(parseInt((a ?? b ?? c) as string, 16)),
    );
}

describe("an approval's text shows every character", () => {
  for (const [name, chars] of Object.entries(CLASSES)) {
    it(`draws ${name} as codes, nothing dropped`, () => {
      fc.assert(
        fc.property(plain, chars, plain, (head, ch, tail) => {
          const text = `${head}${ch}${tail}`;
          const lines = visibleText(text);
          const drawn = lines.join("\n");
          expect(drawn.includes(ch), JSON.stringify(ch)).toBe(false);
          expect(lines).toHaveLength(1);
          expect(decode(lines)).toBe(text);
        }),
        RUNS,
      );
    });
  }

  it("a real newline breaks the line with its mark; a typed backslash-n stays as typed", () => {
    fc.assert(
      fc.property(fc.array(plain, { minLength: 2, maxLength: 5 }), (parts) => {
        const real = parts.join("\n");
        const typed = parts.join("\\n");
        const realLines = visibleText(real);
        expect(realLines).toHaveLength(parts.length);
        realLines
          .slice(0, -1)
          .forEach((line, i) => expect(line).toBe(`${parts[i]}${NEWLINE_MARK}`));
        expect(visibleText(typed)).toEqual([typed]);
        expect(realLines.join("")).not.toBe(visibleText(typed).join(""));
      }),
      RUNS,
    );
    expect(visibleText('ls -la "$(pwd)"  # list files\ntouch X')).toEqual([
      `ls -la "$(pwd)"  # list files${NEWLINE_MARK}`,
      "touch X",
    ]);
    // The mark is a mark, not text: a typed ⏎ is plain text in the pieces.
    expect(visibleLines("a\nb")[0]).toEqual([
      { text: "a" },
      { text: NEWLINE_MARK, mark: "newline" },
    ]);
    expect(visibleLines(`a${NEWLINE_MARK}`)).toEqual([[{ text: `a${NEWLINE_MARK}` }]]);
  });

  it("marks a look-alike letter inside a Latin-looking word, and leaves a foreign word alone", () => {
    const lookalikes = fc.constantFrom(...LATIN_LOOKALIKE.keys());
    const word = fc.stringMatching(/^[a-z]{1,8}$/);
    fc.assert(
      fc.property(word, lookalikes, word, (head, ch, tail) => {
        const text = `cmd ${head}${ch}${tail} -x`;
        const [line] = visibleText(text);
        expect(line!.includes(ch)).toBe(false);
        expect(decode([line!])).toBe(text);
      }),
      RUNS,
    );
    expect(visibleText("рm -rf /")).toEqual(["\\u0440m -rf /"]);
    expect(visibleText("echo привет мир")).toEqual(["echo привет мир"]);
    expect(visibleText("café naïve")).toEqual(["café naïve"]);
  });
});
