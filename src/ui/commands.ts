// The person's slash commands: shell-like argument splitting and parsing into a typed command
// through the command table (commands/table.ts), or a one-line explanation of what is wrong (with
// a "did you mean" for a mistyped name).
import { BUILTIN_NAMES, builtinCommand, COMMANDS } from "./commands/table.js";
import type { UiCommand } from "./commands/types.js";

const NAMES = COMMANDS.map((c) => c.name);

export type { UiCommand } from "./commands/types.js";
export { WAIT_MAX_SECONDS } from "./commands/agents.js";

export type ParsedCommand = { ok: true; command: UiCommand } | { ok: false; error: string };

/** Splits like a shell: spaces separate, quotes group ('…' literal, "…" with \ escapes). */
export function splitArgs(
  text: string,
): { ok: true; args: string[] } | { ok: false; error: string } {
  const args: string[] = [];
  let current = "";
  let started = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else current += ch;
      continue;
    }
    if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (ch === "\\" && i + 1 < text.length && /["\\$`]/.test(text[i + 1]!))
        current += text[++i];
      else current += ch;
      continue;
    }
    if (/\s/.test(ch)) {
      if (started) args.push(current);
      current = "";
      started = false;
      continue;
    }
    started = true;
    if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "\\" && i + 1 < text.length) current += text[++i];
    else current += ch;
  }
  if (quote) return { ok: false, error: `unclosed ${quote === '"' ? "double" : "single"} quote` };
  if (started) args.push(current);
  return { ok: true, args };
}

/** Is this input a command (a leading slash), rather than a message? `//x` sends "/x". */
export function isCommand(text: string): boolean {
  return /^\/[^/\s]/.test(text.trimStart());
}

/**
 * `text` as a built-in command. `others`: the person's own command names (command files, skills),
 * offered in "did you mean" too.
 */
export function parseCommand(text: string, others: readonly string[] = []): ParsedCommand {
  const trimmed = text.trim();
  const head = trimmed.slice(1).split(/\s+/)[0] ?? "";
  const rest = trimmed.slice(1 + head.length).trim();
  const spec = builtinCommand(head);
  if (!spec) {
    const guess = suggest(head, [...NAMES, ...others]);
    return fail(
      `unknown command /${head}${guess ? ` — did you mean /${guess}?` : ""} (/help lists commands)`,
    );
  }
  const split = splitArgs(rest);
  if (!split.ok) return fail(`/${spec.name}: ${split.error}`);
  const parsed = spec.parse(split.args, rest, `usage: ${spec.usage}`);
  return "error" in parsed ? fail(parsed.error) : { ok: true, command: parsed };
}

/** Whether `name` is a built-in command or an alias of one. */
export function isBuiltin(name: string): boolean {
  return BUILTIN_NAMES.has(name.toLowerCase());
}

/** Command names starting with `prefix` (for Tab completion), built-ins first, then `others`. */
export function completeCommand(prefix: string, others: readonly string[] = []): string[] {
  const lower = prefix.toLowerCase();
  return [...NAMES, ...others].filter((n) => n.toLowerCase().startsWith(lower));
}

function suggest(word: string, names: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  if (!lower) return undefined;
  const prefixed = names.filter((n) => n.startsWith(lower));
  if (prefixed.length === 1) return prefixed[0];
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(lower, name);
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best && best.distance <= 2 ? best.name : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

function fail(error: string): ParsedCommand {
  return { ok: false, error };
}
