// Letters that pass for Latin ones, and the skeleton that makes two look-alike strings equal.
// A small table of our own, not Unicode's confusables.txt (thousands of rows): the Cyrillic and
// Greek letters that look like Latin ones in common terminal fonts, digits that pass for letters,
// and the few Latin pairs that do (`rn` for `m`). Enough for agent names and for marking a
// look-alike inside a command; a rarer look-alike (Cherokee, mathematical letters NFKC does not
// fold) is not in it.

/** A non-ASCII letter that looks like a Latin one → that Latin letter. */
export const LATIN_LOOKALIKE: ReadonlyMap<string, string> = new Map(
  Object.entries({
    // Cyrillic, lower case
    а: "a",
    е: "e",
    һ: "h",
    і: "i",
    ј: "j",
    ӏ: "l",
    о: "o",
    р: "p",
    ԛ: "q",
    г: "r",
    ѕ: "s",
    ѵ: "v",
    ԝ: "w",
    х: "x",
    у: "y",
    ү: "y",
    с: "c",
    ԁ: "d",
    ɡ: "g",
    // Cyrillic, upper case
    А: "A",
    В: "B",
    С: "C",
    Е: "E",
    Н: "H",
    І: "I",
    Ј: "J",
    К: "K",
    М: "M",
    О: "O",
    Р: "P",
    Ԛ: "Q",
    Ѕ: "S",
    Т: "T",
    Ԝ: "W",
    Х: "X",
    У: "Y",
    Ү: "Y",
    Ӏ: "I",
    // Greek, lower case
    α: "a",
    γ: "y",
    ι: "i",
    ν: "v",
    ο: "o",
    ρ: "p",
    υ: "u",
    χ: "x",
    ϲ: "c",
    ϳ: "j",
    // Greek, upper case
    Α: "A",
    Β: "B",
    Ε: "E",
    Ζ: "Z",
    Η: "H",
    Ι: "I",
    Κ: "K",
    Μ: "M",
    Ν: "N",
    Ο: "O",
    Ρ: "P",
    Τ: "T",
    Υ: "Y",
    Χ: "X",
    Ϲ: "C",
    // Latin letters that pass for others
    ı: "i",
    ȷ: "j",
    ɑ: "a",
    ɩ: "i",
    ʏ: "y",
  }),
);

/** ASCII that passes for other ASCII: digits for letters, `I` and `|` for `l`, `rn` for `m`. */
const ASCII_LOOKALIKE: readonly [RegExp, string][] = [
  [/rn/g, "m"],
  [/vv/g, "w"],
  [/cl/g, "d"],
  [/[1I|]/g, "l"],
  [/0/g, "o"],
  [/5/g, "s"],
];

/** Default-ignorable code points (zero-width, variation selectors, tags, fillers, …). */
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * The string as it looks, for comparing: NFKC (full-width and compatibility forms folded), the
 * default-ignorables taken out, each look-alike letter replaced by the Latin one, then the ASCII
 * look-alikes folded. Two strings with one skeleton can pass for each other.
 */
export function skeleton(text: string): string {
  let out = "";
  for (const ch of text.normalize("NFKC").replace(IGNORABLE, "")) {
    out += LATIN_LOOKALIKE.get(ch) ?? ch;
  }
  // Look-alikes may compose differently once replaced; fold the ASCII look-alikes to a fixpoint.
  for (let before = ""; before !== out;) {
    before = out;
    for (const [pattern, letter] of ASCII_LOOKALIKE) out = out.replace(pattern, letter);
  }
  return out;
}

/** skeleton, case folded too: `Root`, `RООT` (Cyrillic О) and `r00t` all fold to `root`. */
export function foldedSkeleton(text: string): string {
  return skeleton(skeleton(text).toLowerCase());
}
