// Stored text rules (SPEC §2): every text is valid UTF-8 without NUL, names are 1-64 characters
// without control characters. Problems are INVALID_ARGS saying what was wrong, never a database error.
import { foldedSkeleton } from "../text/confusables.js";
import { codeEscape, firstInvisible, visibleText } from "../text/escape.js";
import { AgentError } from "./errors.js";

export const NAME_MAX_CHARS = 64;

// A high surrogate not followed by a low one, or a low one not preceded by a high one: such a
// string has no UTF-8 encoding (Postgres would reject it, or store U+FFFD in its place).
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// C0 controls, DEL and C1 controls.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function hex(ch: string): string {
  const code = ch.charCodeAt(0);
  return code > 0xff
    ? `\\u${code.toString(16).padStart(4, "0")}`
    : `\\x${code.toString(16).padStart(2, "0")}`;
}

/** What is wrong with `text` as stored text, or undefined when it is fine. */
export function textProblem(text: string): string | undefined {
  const nul = text.indexOf("\u0000");
  if (nul >= 0) return `contains a NUL byte (\\x00) at character ${nul + 1}`;
  const lone = LONE_SURROGATE.exec(text);
  if (lone) {
    return `is not valid UTF-8 (lone surrogate ${hex(lone[0])} at character ${lone.index + 1})`;
  }
  return undefined;
}

/** `value` as stored text, or an INVALID_ARGS error naming `field`. */
export function validateText(value: unknown, field: string): string {
  if (typeof value !== "string") throw new AgentError("INVALID_ARGS", `${field} must be a string`);
  const problem = textProblem(value);
  if (problem) throw new AgentError("INVALID_ARGS", `${field} ${problem}`);
  return value;
}

/**
 * Names that are someone else's: the person (mail from them says so by a marker no name can spell,
 * llm/framing.ts PERSON `⟨person⟩`), the root, a child's word for its parent. Refused however
 * spelt — case, look-alike letters, digits for letters (foldedSkeleton), punctuation and symbols
 * around or between the letters (`⟨person⟩`, `h.u.m.a.n`) — the root keeping `root`.
 */
export const RESERVED_NAMES = ["root", "human", "person", "parent"] as const;
const RESERVED = new Map(RESERVED_NAMES.map((n) => [reservedKey(n), n]));

/** What a name is compared to the reserved names by: its folded skeleton's letters and digits. */
function reservedKey(name: string): string {
  return foldedSkeleton(name).replace(/[^\p{L}\p{N}]/gu, "");
}

export interface NameOptions {
  /** The name of a tree's root: it may be `root` (exactly). */
  root?: boolean;
}

/**
 * An agent name: trimmed, 1-64 characters, no control or other invisible characters (zero-width,
 * bidi, tags, variation selectors, spaces other than U+0020, …), and none that can pass for a
 * reserved name (RESERVED_NAMES). A name that can pass for another agent's of the tree is refused
 * where the tree is known (names.ts).
 */
export function validateName(name: unknown, options: NameOptions = {}): string {
  if (typeof name !== "string" || !name.trim()) {
    throw new AgentError("INVALID_ARGS", "name must be a non-empty string");
  }
  const trimmed = validateText(name, "name").trim();
  const control = CONTROL.exec(trimmed);
  if (control) {
    throw new AgentError(
      "INVALID_ARGS",
      `name must not contain control characters (found ${hex(control[0])} at character ${control.index + 1})`,
    );
  }
  const length = [...trimmed].length;
  if (length > NAME_MAX_CHARS) {
    throw new AgentError(
      "INVALID_ARGS",
      `name is ${length} characters; at most ${NAME_MAX_CHARS} are allowed`,
    );
  }
  // Before trim, which drops some invisibles (U+FEFF, U+00A0, …) silently: ASCII blanks aside,
  // a name given with one is refused, not quietly changed.
  const invisible = firstInvisible(name.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, ""));
  if (invisible) {
    throw new AgentError(
      "INVALID_ARGS",
      `name must not contain invisible characters (found ${codeEscape(invisible.ch)} at character ${invisible.index})`,
    );
  }
  const reserved = RESERVED.get(reservedKey(trimmed));
  if (reserved && !(options.root && trimmed === "root")) {
    const shown = visibleText(trimmed).join("");
    throw new AgentError(
      "INVALID_ARGS",
      shown === reserved
        ? `"${reserved}" is a reserved name; choose another`
        : `name "${shown}" can pass for "${reserved}", a reserved name; choose another`,
    );
  }
  return trimmed;
}

/**
 * Text that is data, not input (tool output, model text): made storable instead of refused —
 * NUL becomes U+FFFD and so does a lone surrogate. Strings inside `data` are scrubbed the same way.
 */
export function scrubText(text: string): string {
  if (!text.includes("\u0000") && !LONE_SURROGATE.test(text)) return text;
  return text
    .replaceAll("\u0000", "\ufffd")
    .replace(new RegExp(LONE_SURROGATE.source, "g"), "\ufffd");
}

export function scrubJson<T>(value: T): T {
  if (typeof value === "string") return scrubText(value) as T;
  if (Array.isArray(value)) return value.map(scrubJson) as T;
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [
        scrubText(k),
        scrubJson(v),
      ]),
    ) as T;
  }
  return value;
}
