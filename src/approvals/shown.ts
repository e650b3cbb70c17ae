// An approval's call as a person reads it (the TUI's block, `warren approvals`): every argument
// of the stored call, never the one-line subject the policy matched — a call may carry arguments
// the subject leaves out (issue 38: `{"path": "README.md", "command": "rm -rf ~"}` was shown as
// `README.md`). The drawing of each value (newlines, invisibles) is text/escape.ts visibleLines.

/** One argument: its key (a path into nested objects and arrays) and its value as text. */
export interface ShownArgument {
  key: string;
  /** A string as it is; any other value as JSON. */
  value: string;
}

/**
 * The call's arguments, in the order the call gives them, nested objects and arrays flattened to
 * `key.inner` / `key[0]`. Arguments that are not a JSON object are one value, `arguments`.
 */
export function shownArguments(raw: string): ShownArgument[] {
  if (!raw.trim()) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return [{ key: "arguments", value: raw }];
  }
  if (!isRecord(parsed)) return [{ key: "arguments", value: raw }];
  const out: ShownArgument[] = [];
  for (const [key, value] of Object.entries(parsed)) flatten(key, value, out);
  return out;
}

function flatten(key: string, value: unknown, out: ShownArgument[]): void {
  if (isRecord(value) && Object.keys(value).length > 0) {
    for (const [inner, v] of Object.entries(value)) flatten(`${key}.${inner}`, v, out);
  } else if (Array.isArray(value) && value.length > 0) {
    value.forEach((v, i) => flatten(`${key}[${i}]`, v, out));
  } else {
    out.push({ key, value: typeof value === "string" ? value : JSON.stringify(value) });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
