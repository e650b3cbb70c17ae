// The glob matcher shared by glob and grep: a pattern compiled to an NFA and run as a set of
// states (cached as a lazily built DFA), so matching costs at most O(path length × pattern
// length) whatever the pattern: there is no backtracking.
import { setImmediate } from "node:timers/promises";
import type { Checked } from "./paths.js";

/** Longest pattern accepted, in characters: bounds the NFA and so the cost per file name. */
export const MAX_GLOB_CHARS = 1000;

/** Lets the event loop run other work (other agents' turns) between batches of matching. */
export function nextTurn(): Promise<void> {
  return setImmediate();
}

export interface GlobMatcher {
  /** True when the whole of `candidate` (a "/"-separated relative path) matches. */
  test(candidate: string): boolean;
}

type Atom =
  | { kind: "char"; code: number }
  | { kind: "class"; negated: boolean; ranges: [number, number][] }
  | { kind: "one" } // ?
  | { kind: "star" } // * (and ** that is not a whole segment): any run without "/"
  | { kind: "dirs" } // "**/": any number of whole directories, none included
  | { kind: "rest" } // a trailing "**": anything, "/" included
  | { kind: "alt"; branches: Atom[][] };

class GlobSyntaxError extends Error {}

const SLASH = 0x2f;

/**
 * Compiles `pattern`: `*` and `?` stay within one directory (and match dotfiles), `**` as a whole
 * segment crosses directories, `[a-z]`/`[!a-z]` classes, `{a,b}` alternation (nestable), `\`
 * escapes. A malformed pattern is an INVALID_ARGS failure with a one-line reason.
 */
export function compileGlob(pattern: string): Checked<GlobMatcher> {
  const chars = Array.from(pattern, (c) => c.codePointAt(0) ?? 0);
  if (chars.length > MAX_GLOB_CHARS) {
    return invalid(`glob is too long (${chars.length} characters, at most ${MAX_GLOB_CHARS})`);
  }
  try {
    const parser = new Parser(chars);
    const atoms = parser.sequence(false);
    return { ok: true, value: new Nfa(atoms) };
  } catch (err) {
    if (err instanceof GlobSyntaxError) return invalid(`invalid glob "${pattern}": ${err.message}`);
    throw err;
  }
}

function invalid(message: string): Checked<never> {
  return { ok: false, error: { code: "INVALID_ARGS", message } };
}

class Parser {
  private at = 0;
  constructor(private readonly chars: number[]) {}

  /** Atoms up to the end, or (inside braces) up to an unconsumed top-level "," or "}". */
  sequence(inBraces: boolean): Atom[] {
    const atoms: Atom[] = [];
    const start = this.at;
    while (this.at < this.chars.length) {
      const c = this.chars[this.at] as number;
      if (inBraces && (c === 0x2c || c === 0x7d)) break; // , }
      this.at++;
      switch (c) {
        case 0x2a: // *
          atoms.push(this.stars(start, inBraces));
          break;
        case 0x3f: // ?
          atoms.push({ kind: "one" });
          break;
        case 0x5b: // [
          atoms.push(this.charClass());
          break;
        case 0x7b: // {
          atoms.push(this.braces());
          break;
        case 0x7d: // }
          throw new GlobSyntaxError('"}" without a matching "{" (write \\} for a literal one)');
        case 0x5c: // \
          atoms.push({ kind: "char", code: this.chars[this.at++] ?? c });
          break;
        default:
          atoms.push({ kind: "char", code: c });
      }
    }
    return atoms;
  }

  /** After a "*": a run of stars is "**" only as a whole path segment. */
  private stars(sequenceStart: number, inBraces: boolean): Atom {
    const first = this.at - 1;
    while (this.chars[this.at] === 0x2a) this.at++;
    const segmentStart = first === sequenceStart || this.chars[first - 1] === SLASH;
    if (this.at - first < 2 || !segmentStart) return { kind: "star" };
    const next = this.chars[this.at];
    if (next === SLASH) {
      this.at++;
      return { kind: "dirs" };
    }
    const sequenceEnd = next === undefined || (inBraces && (next === 0x2c || next === 0x7d));
    return sequenceEnd ? { kind: "rest" } : { kind: "star" };
  }

  private charClass(): Atom {
    let negated = false;
    if (this.chars[this.at] === 0x21 || this.chars[this.at] === 0x5e) {
      negated = true;
      this.at++;
    }
    const ranges: [number, number][] = [];
    let first = true;
    for (;;) {
      let c = this.chars[this.at++];
      if (c === undefined) {
        throw new GlobSyntaxError('"[" without a closing "]" (write \\[ for a literal one)');
      }
      if (c === 0x5d && !first) return { kind: "class", negated, ranges };
      first = false;
      if (c === 0x5c) c = this.literalAfterBackslash();
      let hi = c;
      if (this.chars[this.at] === 0x2d && this.chars[this.at + 1] !== 0x5d) {
        this.at++; // -
        const end = this.chars[this.at++];
        if (end === undefined) continue; // reported as unclosed on the next round
        hi = end === 0x5c ? this.literalAfterBackslash() : end;
        if (hi < c) {
          const range = `${String.fromCodePoint(c)}-${String.fromCodePoint(hi)}`;
          throw new GlobSyntaxError(`range "${range}" is out of order`);
        }
      }
      ranges.push([c, hi]);
    }
  }

  private literalAfterBackslash(): number {
    const c = this.chars[this.at++];
    if (c === undefined) {
      throw new GlobSyntaxError('"[" without a closing "]" (write \\[ for a literal one)');
    }
    return c;
  }

  private braces(): Atom {
    const branches: Atom[][] = [];
    for (;;) {
      branches.push(this.sequence(true));
      const c = this.chars[this.at++];
      if (c === 0x7d) return { kind: "alt", branches };
      if (c === undefined) {
        throw new GlobSyntaxError('"{" without a closing "}" (write \\{ for a literal one)');
      }
      // c is ",": another branch follows.
    }
  }
}

/** A consuming state tests one character and moves to `next`; a split moves without one. */
type State =
  | { kind: "test"; accepts: (code: number) => boolean; next: number }
  | { kind: "split"; next: number[] }
  | { kind: "match" };

/** A set of NFA states reached together, with the sets each character leads to (null: none). */
interface DfaState {
  states: number[];
  matches: boolean;
  next: Map<number, DfaState | null>;
}

/** DFA states kept before the cache starts over: bounds memory for patterns with many. */
const MAX_DFA_STATES = 1000;

const notSlash = (code: number) => code !== SLASH;
const anything = () => true;

/**
 * Thompson's construction, simulated with a set of current states (Russ Cox, "Regular
 * Expression Matching Can Be Simple And Fast"): every state is visited at most once per
 * character, and each set's successors are cached, so a character usually costs one lookup.
 */
class Nfa implements GlobMatcher {
  /** State 0 is the match state. */
  private readonly states: State[] = [{ kind: "match" }];
  private readonly start: number;
  /** Per state, the step at which it last joined a set (dedupes without clearing). */
  private readonly seen: Int32Array;
  private step = 0;
  private readonly dfa = new Map<string, DfaState>();
  private initial: DfaState | undefined;

  constructor(atoms: Atom[]) {
    this.start = this.sequence(atoms, 0);
    this.seen = new Int32Array(this.states.length).fill(-1);
  }

  test(candidate: string): boolean {
    this.initial ??= this.dfaState(this.closure([this.start]));
    let current = this.initial;
    for (const ch of candidate) {
      const code = ch.codePointAt(0) ?? 0;
      let next = current.next.get(code);
      if (next === undefined) {
        next = this.advance(current, code);
        current.next.set(code, next);
      }
      if (next === null) return false;
      current = next;
    }
    return current.matches;
  }

  private advance(from: DfaState, code: number): DfaState | null {
    const moved: number[] = [];
    for (const index of from.states) {
      const state = this.states[index] as State;
      if (state.kind === "test" && state.accepts(code)) moved.push(state.next);
    }
    return moved.length === 0 ? null : this.dfaState(this.closure(moved));
  }

  private dfaState(states: number[]): DfaState {
    states.sort((a, b) => a - b);
    const key = states.join(",");
    const known = this.dfa.get(key);
    if (known !== undefined) return known;
    if (this.dfa.size >= MAX_DFA_STATES) {
      // Start over rather than grow: the old states stay correct for a match in progress.
      this.dfa.clear();
      this.initial = undefined;
    }
    const created = { states, matches: states[0] === 0, next: new Map() };
    this.dfa.set(key, created);
    return created;
  }

  /** The consuming and matching states reachable from `from` without reading a character. */
  private closure(from: number[]): number[] {
    if (this.step === 0x7fffffff) {
      this.seen.fill(-1);
      this.step = 0;
    }
    const step = ++this.step;
    const out: number[] = [];
    const stack = [...from];
    while (stack.length > 0) {
      const index = stack.pop() as number;
      if (this.seen[index] === step) continue;
      this.seen[index] = step;
      const state = this.states[index] as State;
      if (state.kind === "split") stack.push(...state.next);
      else out.push(index);
    }
    return out;
  }

  private add(state: State): number {
    this.states.push(state);
    return this.states.length - 1;
  }

  /** Compiled back to front: each atom's states lead on to `next`; returns the first state. */
  private sequence(atoms: Atom[], next: number): number {
    let at = next;
    for (let i = atoms.length - 1; i >= 0; i--) at = this.atom(atoms[i] as Atom, at);
    return at;
  }

  private atom(atom: Atom, next: number): number {
    switch (atom.kind) {
      case "char":
        return this.add({ kind: "test", accepts: (code) => code === atom.code, next });
      case "one":
        return this.add({ kind: "test", accepts: notSlash, next });
      case "class": {
        const { negated, ranges } = atom;
        const inRanges = (code: number) => ranges.some(([lo, hi]) => code >= lo && code <= hi);
        const accepts = (code: number) => code !== SLASH && inRanges(code) !== negated;
        return this.add({ kind: "test", accepts, next });
      }
      case "star":
        return this.loop(notSlash, next);
      case "rest":
        return this.loop(anything, next);
      case "dirs": {
        // (name "/")*: a split that either leaves or enters a name loop ending in "/".
        const entry = this.add({ kind: "split", next: [] });
        const slash = this.add({ kind: "test", accepts: (code) => code === SLASH, next: entry });
        const name = this.loop(notSlash, slash);
        (this.states[entry] as { next: number[] }).next.push(name, next);
        return entry;
      }
      case "alt": {
        const starts = atom.branches.map((branch) => this.sequence(branch, next));
        return this.add({ kind: "split", next: starts });
      }
    }
  }

  /** Zero or more characters accepted by `accepts`, then `next`. */
  private loop(accepts: (code: number) => boolean, next: number): number {
    const entry = this.add({ kind: "split", next: [] });
    const body = this.add({ kind: "test", accepts, next: entry });
    (this.states[entry] as { next: number[] }).next.push(body, next);
    return entry;
  }
}
