// What a call's patterns are matched against, and what an approval names (its subject): a bash
// command, a file tool's path, or for any other tool the whole call — every argument.
import { normalisePath } from "./patterns.js";

/** The tools whose subject is a file path (normalised against the agent's cwd before matching). */
export const PATH_TOOLS = new Set(["read_file", "write_file", "edit_file", "glob", "grep"]);

/**
 * What a call's patterns are matched against: `bash`'s command; a file tool's path (else its
 * `pattern`), normalised against `cwd` when given: relative to it when inside (`./a`, `x/../a`,
 * `a//b` and `/cwd/a` are all `a`), else absolute (`/etc/hostname`); any other tool's arguments,
 * all of them, as JSON with sorted keys (issue 38: one field of an MCP call — `path` — stood for a
 * call whose `command` said something else). The empty string when there is nothing to name.
 */
export function callSubject(tool: string, args: unknown, cwd?: string): string {
  if (!args || typeof args !== "object") return "";
  const a = args as Record<string, unknown>;
  if (tool === "bash") return typeof a.command === "string" ? a.command : "";
  if (!PATH_TOOLS.has(tool)) return wholeCall(a);
  const key = "path" in a ? "path" : "pattern";
  const value = a[key];
  if (typeof value !== "string") return "";
  if (key === "path" && cwd !== undefined) return normalisePath(cwd, value);
  return value;
}

/** Every argument, keys sorted at every level, so one call always reads the same. */
function wholeCall(args: Record<string, unknown>): string {
  if (Object.keys(args).length === 0) return "";
  return JSON.stringify(args, (_key, value: unknown) =>
    value && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(
          Object.entries(value as Record<string, unknown>).sort(([x], [y]) =>
            x < y ? -1 : x > y ? 1 : 0,
          ),
        )
      : value,
  );
}
