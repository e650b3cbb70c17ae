// Teaches blessed to parse a box's content line by line and keep each line's parse while it is
// shown. blessed parses the whole content whenever any of it changes (tags to SGR, wide
// characters' spare cells, the no-wrap cut, each line's starting attribute), and works out the
// starting attributes again at every render even when nothing changed. With the agent panel open
// and scrolling by a row per key, or a stream growing at the bottom, nearly every line of a frame
// was shown by the last one: only the new lines are parsed now. Call installLineParse() once,
// before creating a screen.
import { createRequire } from "node:module";

/** One content line parsed as blessed would: its real (cut) lines, and attributes seen through it. */
interface ParsedLine {
  width: number;
  /** After tags became SGR sequences, wide characters got their spare cell and the cut. */
  fake: string;
  /** What blessed draws: one line, as our boxes do not wrap. */
  real: string[];
  /** Widest real line in UTF-16 units without SGR (blessed's mwidth). */
  mwidth: number;
  /** The attribute after this line, by the one it starts with (and the box's default). */
  ends: Map<string, number>;
}

interface Clines extends Array<string> {
  width: number;
  content: string;
  attr: number[];
  ci: number[];
  rtof: number[];
  ftor: number[][];
  fake: string[];
  real: string[];
  mwidth: number;
  /** The box's default attribute the starting attributes were worked out with. */
  dattr?: number;
}

interface ElementThis {
  detached?: boolean;
  wrap?: boolean;
  parseTags?: boolean;
  scrollbar?: unknown;
  shrink?: boolean;
  type?: string;
  content: string;
  width: number;
  iwidth: number;
  style: unknown;
  _clines?: Clines;
  _pcontent?: string;
  screen: {
    fullUnicode: boolean;
    tabc: string;
    program: { isiTerm2?: boolean };
    attrCode(code: string, cur: number, def: number): number;
  };
  sattr(style: unknown): number;
  _parseTags(text: string): string;
  _wrapContent(content: string, width: number): string[];
  emit(event: string): void;
  /** The content's lines as last parsed, in order, and by their text (for the next parse). */
  [LINES]?: { order: ParsedLine[]; byText: Map<string, ParsedLine> };
}

type ParseContent = (this: ElementThis, noTags?: boolean) => boolean;

interface ElementProto {
  parseContent: ParseContent & { [WHOLE]?: ParseContent };
}

interface BlessedUnicode {
  chars: { all: RegExp };
}

const LINES = Symbol("warren.parsedLines");
/** On the installed parseContent: blessed's own (installing twice is a no-op). */
const WHOLE = Symbol.for("warren.parseWhole");

function elementPrototype(): ElementProto {
  const require = createRequire(import.meta.url);
  return (require("blessed/lib/widgets/element.js") as { prototype: ElementProto }).prototype;
}

/** blessed's own parseContent (for tests that compare with it). */
export function blessedParseContent(): ParseContent {
  const parse = elementPrototype().parseContent;
  return parse[WHOLE] ?? parse;
}

export function installLineParse(): void {
  const proto = elementPrototype();
  if (proto.parseContent[WHOLE]) return;
  const require = createRequire(import.meta.url);
  const unicode = require("blessed/lib/unicode.js") as BlessedUnicode;
  const parseWhole = proto.parseContent;

  /** blessed's parseContent steps for one line, in its order. */
  const parseLine = (el: ElementThis, line: string, width: number): ParsedLine => {
    /* eslint-disable no-control-regex -- blessed's own sanitising, applied to one line */
    let fake = line
      .replace(/[\x00-\x08\x0b-\x0c\x0e-\x1a\x1c-\x1f\x7f]/g, "")
      .replace(/\x1b(?!\[[\d;]*m)/g, "")
      .replace(/\t/g, el.screen.tabc);
    /* eslint-enable no-control-regex */
    fake = fake.replace(unicode.chars.all, "$1\x03");
    fake = el._parseTags(fake);
    const wrapped = el._wrapContent(fake, width) as string[] & { fake: string[] };
    const real = [...wrapped];
    let mwidth = 0;
    // eslint-disable-next-line no-control-regex -- SGR sequences
    for (const r of real) mwidth = Math.max(mwidth, r.replace(/\x1b\[[\d;]*m/g, "").length);
    return { width, fake: wrapped.fake.join("\n"), real, mwidth, ends: new Map() };
  };

  /** The attribute after `line` when it starts with `start` (blessed's _parseAttr, per line). */
  const endAttr = (el: ElementThis, line: ParsedLine, start: number, dattr: number): number => {
    const key = `${start} ${dattr}`;
    const known = line.ends.get(key);
    if (known !== undefined) return known;
    let attr = start;
    for (const real of line.real) {
      // eslint-disable-next-line no-control-regex -- SGR sequences
      for (const sgr of real.matchAll(/\x1b\[[\d;]*m/g)) {
        attr = el.screen.attrCode(sgr[0], attr, dattr);
      }
    }
    line.ends.set(key, attr);
    return attr;
  };

  const startAttrs = (el: ElementThis, lines: ParsedLine[], dattr: number): number[] => {
    const attrs: number[] = [];
    let attr = dattr;
    for (const line of lines) {
      for (let i = 0; i < line.real.length; i++) attrs.push(attr);
      attr = endAttr(el, line, attr, dattr);
    }
    return attrs;
  };

  const parseByLine: ParseContent = function (noTags) {
    const content = this.content;
    // Our boxes: tags, no wrap, nothing that carries from line to line but attributes.
    const byLine =
      !noTags &&
      this.parseTags === true &&
      this.wrap === false &&
      !this.scrollbar &&
      !this.shrink &&
      this.type !== "textarea" &&
      this.screen.fullUnicode &&
      !this.screen.program.isiTerm2 &&
      !content.includes("\r") &&
      !/{\/?(left|center|right)}|{\|}/.test(content);
    if (!byLine) {
      delete this[LINES];
      return parseWhole.call(this, noTags);
    }
    if (this.detached) return false;
    const width = this.width - this.iwidth;
    const dattr = this.sattr(this.style);
    const known = this._clines;
    const kept = this[LINES];
    if (kept && known && known.width === width && known.content === content) {
      // Unchanged: blessed would work out every line's starting attribute again here.
      if (known.dattr !== dattr) {
        known.attr = startAttrs(this, kept.order, dattr);
        known.dattr = dattr;
      }
      return false;
    }
    const lines = new Map<string, ParsedLine>();
    const parsed: ParsedLine[] = [];
    for (const raw of content.split("\n")) {
      let line = lines.get(raw) ?? kept?.byText.get(raw);
      if (!line || line.width !== width) line = parseLine(this, raw, width);
      lines.set(raw, line);
      parsed.push(line);
    }
    this[LINES] = { order: parsed, byText: lines };
    const clines = [] as unknown as Clines;
    const rtof: number[] = [];
    const ftor: number[][] = [];
    let mwidth = 0;
    parsed.forEach((line, f) => {
      ftor.push([]);
      for (const real of line.real) {
        ftor[f]!.push(clines.length);
        rtof.push(f);
        clines.push(real);
      }
      mwidth = Math.max(mwidth, line.mwidth);
    });
    clines.rtof = rtof;
    clines.ftor = ftor;
    clines.fake = parsed.map((line) => line.fake);
    clines.real = clines;
    clines.mwidth = mwidth;
    clines.width = width;
    clines.content = content;
    clines.attr = startAttrs(this, parsed, dattr);
    clines.dattr = dattr;
    clines.ci = [];
    let total = 0;
    for (const line of clines) {
      clines.ci.push(total);
      total += line.length + 1;
    }
    this._clines = clines;
    this._pcontent = clines.join("\n");
    this.emit("parsed content");
    return true;
  };
  // Patch: Element.prototype.parseContent (blessed/lib/widgets/element.js): changed lines only.
  proto.parseContent = Object.assign(parseByLine, { [WHOLE]: parseWhole });
}
