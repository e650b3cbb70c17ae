// Agent-controlled text is data, never terminal control: control characters and escape sequences
// become visible escapes (`\x1b`, `\x07`, …) wherever such text reaches a terminal.

/** C0 and C1 controls, DEL, line/paragraph separators and bidi overrides (which reorder text). */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Replaces C0/C1 control characters (and DEL) with `\xNN` escapes. Newlines (and tabs, as
 * spaces) are kept when `multiline` is set; otherwise they are escaped too (`\n`).
 */
export function escapeControl(text: string, options: { multiline?: boolean } = {}): string {
  const multiline = options.multiline ?? false;
  return text.replace(CONTROL, (ch) => {
    if (multiline && ch === "\n") return "\n";
    if (multiline && ch === "\t") return "    ";
    if (ch === "\n") return "\\n";
    if (ch === "\r" && multiline) return "";
    const code = ch.charCodeAt(0);
    if (code > 0xff) return `\\u${code.toString(16).padStart(4, "0")}`;
    return `\\x${code.toString(16).padStart(2, "0")}`;
  });
}

/** One line of agent text for a terminal: control characters escaped, newlines shown as `\n`. */
export function escapeLine(text: string): string {
  return escapeControl(text, { multiline: false });
}
