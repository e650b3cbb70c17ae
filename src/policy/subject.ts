// What a call's patterns are matched against (its subject): a bash command, a file tool's path.
import { normalisePath } from "./patterns.js";

/** The tools whose subject is a file path (normalised against the agent's cwd before matching). */
export const PATH_TOOLS = new Set(["read_file", "write_file", "edit_file", "glob", "grep"]);

/**
 * What a call's patterns are matched against: the command, the path, else the empty string. A
 * path is normalised against `cwd` when given: relative to it when inside (`./a`, `x/../a`,
 * `a//b` and `/cwd/a` are all `a`), else absolute (`/etc/hostname`).
 */
export function callSubject(tool: string, args: unknown, cwd?: string): string {
  if (!args || typeof args !== "object") return "";
  const a = args as Record<string, unknown>;
  const key = tool === "bash" ? "command" : "path" in a ? "path" : "pattern";
  const value = a[key];
  if (typeof value !== "string") return "";
  if (key === "path" && PATH_TOOLS.has(tool) && cwd !== undefined) return normalisePath(cwd, value);
  return value;
}
