// The config's `hooks`, in Claude Code's shape: {Event: [{matcher, hooks: [{type: "command",
// command, timeout}]}]} for the events warren runs (SPEC §9). The person's config file sets
// them, and Claude Code's settings files (config/claude-settings.ts: ~/.claude/settings.json, and
// a project's only once the person trusted it); profiles and agent files cannot, and nothing an
// agent does reaches them (`.claude/` is read-only to agents).
import path from "node:path";
import { repositoryRoot } from "../paths.js";
import { refusal, resolveShellCommand, type RunTrust } from "../tools/runnable.js";

/** The events warren runs hooks for. */
export const HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "Stop",
  "SubagentStop",
  "Notification",
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** Claude Code's other events: accepted in a copied config, with one warning that they never run. */
const CLAUDE_ONLY_EVENTS = new Set([
  "UserPromptSubmit",
  "SessionStart",
  "SessionEnd",
  "PreCompact",
  "PostToolUseFailure",
  "PermissionRequest",
  "SubagentStart",
]);

export const DEFAULT_HOOK_TIMEOUT_S = 60;

export interface HookCommand {
  command: string;
  /** Seconds before the hook's process group is killed. */
  timeout: number;
  /** false: runs outside the sandbox (`"sandbox": false`; only the person's config sets hooks). */
  sandbox?: false;
}

export interface HookGroup {
  /** "" (or "*"): every tool; a name, names joined by `|`, or a regular expression. */
  matcher: string;
  hooks: HookCommand[];
}

export type HooksConfig = Partial<Record<HookEvent, HookGroup[]>>;

/**
 * Checks the config's `hooks` and returns them typed, with one warning per Claude Code event warren
 * does not run. Throws an Error with one line naming the offending key.
 */
export function validateHooks(
  value: unknown,
  name = "hooks",
): { hooks: HooksConfig; warnings: string[] } {
  const hooks: HooksConfig = {};
  const warnings: string[] = [];
  if (value === undefined || value === null) return { hooks, warnings };
  const usage = `${name} must be {"EVENT": [{"matcher": "…", "hooks": [{"type": "command", "command": "…"}]}]}`;
  if (typeof value !== "object" || Array.isArray(value)) throw new Error(usage);
  for (const [event, groups] of Object.entries(value as Record<string, unknown>)) {
    const where = `${name}.${event}`;
    if (CLAUDE_ONLY_EVENTS.has(event)) {
      warnings.push(
        `${where}: warren does not run this event (it runs ${HOOK_EVENTS.join(", ")}); ignored`,
      );
      continue;
    }
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      throw new Error(`${where} is not a hook event (${HOOK_EVENTS.join(", ")})`);
    }
    if (!Array.isArray(groups)) throw new Error(`${where} must be a list of {"matcher", "hooks"}`);
    hooks[event as HookEvent] = groups.map((group, i) => validateGroup(group, `${where}[${i}]`));
  }
  return { hooks, warnings };
}

function validateGroup(value: unknown, where: string): HookGroup {
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new Error(`${where} must be {"matcher": "…", "hooks": [{"type": "command", …}]}`);
  }
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).find((k) => k !== "matcher" && k !== "hooks");
  if (unknown !== undefined)
    throw new Error(`${where} has an unknown key "${unknown}" (matcher, hooks)`);
  const matcher = fields.matcher ?? "";
  if (typeof matcher !== "string") throw new Error(`${where}.matcher must be a string`);
  const problem = matcherProblem(matcher);
  if (problem) throw new Error(`${where}.matcher is not a valid regular expression: ${problem}`);
  if (!Array.isArray(fields.hooks) || fields.hooks.length === 0) {
    throw new Error(
      `${where}.hooks must be a non-empty list of {"type": "command", "command": "…"}`,
    );
  }
  return {
    matcher,
    hooks: fields.hooks.map((hook, j) => validateCommand(hook, `${where}.hooks[${j}]`)),
  };
}

function validateCommand(value: unknown, where: string): HookCommand {
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new Error(`${where} must be {"type": "command", "command": "…", "timeout": seconds}`);
  }
  const fields = value as Record<string, unknown>;
  const keys = ["type", "command", "timeout", "sandbox"];
  const unknown = Object.keys(fields).find((k) => !keys.includes(k));
  if (unknown !== undefined) {
    throw new Error(`${where} has an unknown key "${unknown}" (${keys.join(", ")})`);
  }
  if (fields.sandbox !== undefined && typeof fields.sandbox !== "boolean") {
    throw new Error(`${where}.sandbox must be true or false`);
  }
  if (fields.type !== "command") {
    throw new Error(`${where}.type must be "command" (warren runs command hooks only)`);
  }
  if (typeof fields.command !== "string" || fields.command.trim() === "") {
    throw new Error(`${where}.command must be a non-empty string`);
  }
  const timeout = fields.timeout ?? DEFAULT_HOOK_TIMEOUT_S;
  if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0) {
    throw new Error(`${where}.timeout must be a positive number of seconds`);
  }
  return { command: fields.command, timeout, ...(fields.sandbox === false && { sandbox: false }) };
}

/** Why `matcher` is no regular expression, or undefined when it is one (or a plain name). */
function matcherProblem(matcher: string): string | undefined {
  if (isPlainMatcher(matcher)) return undefined;
  try {
    new RegExp(matcher);
    return undefined;
  } catch (err) {
    return (err as Error).message.replace(/^Invalid regular expression: /, "");
  }
}

/** "", "*", a name or names joined by `|`: matched exactly, as Claude Code does. */
function isPlainMatcher(matcher: string): boolean {
  return matcher === "" || matcher === "*" || /^[A-Za-z0-9_|]+$/.test(matcher);
}

/** Claude Code's tool names, so a copied matcher (`Bash`, `Edit|Write`) finds warren's tools. */
const CLAUDE_NAMES: Record<string, string[]> = {
  read_file: ["Read"],
  write_file: ["Write"],
  edit_file: ["Edit", "MultiEdit"],
  bash: ["Bash"],
  glob: ["Glob"],
  grep: ["Grep"],
  fork: ["Task"],
};

const compiled = new Map<string, RegExp>();

/**
 * Does `matcher` match `subject` (a tool name, a notification type, a child's profile)? Empty and
 * `*` match everything; plain names (`Bash`, `bash|write_file`) match exactly; anything else is a
 * regular expression, unanchored as in Claude Code. A tool also answers to its Claude Code name.
 */
export function matches(matcher: string, subject: string): boolean {
  if (matcher === "" || matcher === "*") return true;
  const names = [subject, ...(CLAUDE_NAMES[subject] ?? [])];
  if (isPlainMatcher(matcher)) {
    const wanted = matcher.split("|");
    return names.some((n) => wanted.includes(n));
  }
  let re = compiled.get(matcher);
  if (!re) {
    re = new RegExp(matcher);
    compiled.set(matcher, re);
  }
  return names.some((n) => re.test(n));
}

/**
 * The hook commands of `event` whose matcher matches `subject` (undefined: every matcher, for
 * events without a subject), each once (by its command).
 */
export function hooksFor(
  hooks: HooksConfig | undefined,
  event: HookEvent,
  subject: string | undefined,
): HookCommand[] {
  const out: HookCommand[] = [];
  for (const group of hooks?.[event] ?? []) {
    if (subject !== undefined && !matches(group.matcher, subject)) continue;
    for (const hook of group.hooks) {
      if (!out.some((h) => h.command === hook.command)) out.push(hook);
    }
  }
  return out;
}

/**
 * `$CLAUDE_PROJECT_DIR` for a hook of an agent in `cwd`: the repository's root (a worktree child's
 * is its worktree), else the directory warren started in — as Claude Code sets it, so a hook
 * script named from the project root is found from any subfolder.
 */
export function projectDir(cwd: string, startDir: string = process.cwd()): string {
  return repositoryRoot(cwd) ?? path.resolve(startDir);
}

/**
 * Why `command` must not run as a hook in `cwd` (one line), or undefined: it would run a file an
 * agent could have written (tools/runnable.ts). Checked at start and again before each run.
 * `pathVar`: the PATH the hook gets; `$CLAUDE_PROJECT_DIR` is projectDir(cwd), as for the hook.
 */
export function hookRefusal(
  event: HookEvent,
  command: string,
  cwd: string,
  trust: RunTrust,
  pathVar: string | undefined = process.env.PATH,
): string | undefined {
  const vars = { CLAUDE_PROJECT_DIR: projectDir(cwd), PWD: cwd, HOME: process.env.HOME };
  const resolved = resolveShellCommand(command, cwd, vars, pathVar);
  const what = `hook ${event} (${command.trim().split("\n")[0]!.slice(0, 60)})`;
  return refusal(what, resolved, trust, [cwd]);
}

/** One line per configured hook that would be refused in `cwd` (shown at start). */
export function refusedHooks(
  hooks: HooksConfig,
  cwd: string,
  trust: RunTrust,
  pathVar?: string,
): string[] {
  const lines = new Set<string>();
  for (const event of HOOK_EVENTS) {
    for (const group of hooks[event] ?? []) {
      for (const hook of group.hooks) {
        const line = hookRefusal(event, hook.command, cwd, trust, pathVar);
        if (line) lines.add(line);
      }
    }
  }
  return [...lines];
}
