// The tool policy: for each tool `allow`, `ask` or `deny`, with patterns for `bash` commands and
// file paths. A config's policy sits over the defaults (reads allowed, writes and bash asked); a
// profile's policy, and so a fork's, can only narrow it: every policy in an agent's chain is
// asked and the strictest answer wins (deny > ask > allow). A `bash` command is matched on its
// parse (shell.ts, commands.ts): every simple command, nothing opaque; a path after normalising it.
// The decision is a pure function of the policies and the call (decide).
import { settingsVerdict, type SettingsRule } from "./claude-rules.js";
import { shellVerdict } from "./commands.js";
import { matchesPattern, pathHit, type Patterns } from "./patterns.js";
import { analyseShell, loadShellParser, shellParserLoaded, type ShellAnalysis } from "./shell.js";
import { callSubject, PATH_TOOLS } from "./subject.js";
import type { Policy, ToolRule, Verdict } from "./types.js";

export type { Policy, ToolRule, Verdict } from "./types.js";
export type { SettingsRule } from "./claude-rules.js";

/** What a new user gets: reading and the agent tools run, writing and commands are asked. */
export const DEFAULT_POLICY: Policy = {
  read_file: "allow",
  glob: "allow",
  grep: "allow",
  fork: "allow",
  send: "allow",
  wait: "allow",
  kill: "allow",
  // Loads a skill's instructions and reads its folder's files: reading, like read_file.
  skill: "allow",
  write_file: "ask",
  edit_file: "ask",
  bash: "ask",
  // MCP servers' tools (mcp/catalog.ts): asked, like bash.
  "mcp__*": "ask",
  "*": "ask",
};

/** How `ask` is answered in a tree: by a person, or automatically (SPEC §1, `--approve`). */
export type ApproveMode = "ask" | "all" | "none";

export function parseApproveMode(value: string, name = "--approve"): ApproveMode {
  const mode = value.trim().toLowerCase();
  if (mode === "ask" || mode === "all" || mode === "none") return mode;
  if (mode === "ask-fail") return "none";
  throw new Error(`${name} must be ask, all or none (ask-fail), got ${JSON.stringify(value)}`);
}

const VERDICTS: readonly string[] = ["allow", "ask", "deny"];
const RANK: Record<Verdict, number> = { allow: 0, ask: 1, deny: 2 };

/** Checks a policy from a config file; throws a one-line message naming the bad entry. */
export function validatePolicy(value: unknown, name: string): Policy | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new Error(`${name} must be an object of tool names to "allow", "ask" or "deny"`);
  }
  for (const [tool, rule] of Object.entries(value as Record<string, unknown>)) {
    const where = `${name}.${tool}`;
    if (typeof rule === "string") {
      if (!VERDICTS.includes(rule)) throw new Error(`${where} must be allow, ask or deny`);
      continue;
    }
    if (!rule || typeof rule !== "object" || Array.isArray(rule)) {
      throw new Error(`${where} must be allow, ask, deny or {allow, ask, deny: [patterns]}`);
    }
    for (const [key, list] of Object.entries(rule as Record<string, unknown>)) {
      if (key === "default") {
        if (typeof list !== "string" || !VERDICTS.includes(list)) {
          throw new Error(`${where}.default must be allow, ask or deny`);
        }
      } else if (VERDICTS.includes(key)) {
        if (!Array.isArray(list) || list.some((p) => typeof p !== "string" || p.length > 500)) {
          throw new Error(`${where}.${key} must be a list of patterns (strings)`);
        }
      } else {
        throw new Error(`${where} has an unknown key "${key}" (allow, ask, deny, default)`);
      }
    }
  }
  return value as Policy;
}

/**
 * A policy's rule for `tool`: its own entry, else the longest `*` pattern naming it
 * (`mcp__github__*`), else `*`.
 */
export function ruleFor(policy: Policy | undefined, tool: string): ToolRule | undefined {
  if (!policy) return undefined;
  const own = policy[tool];
  if (own !== undefined) return own;
  let best: string | undefined;
  for (const key of Object.keys(policy)) {
    if (key === "*" || !key.includes("*") || !matchesPattern(key, tool)) continue;
    if (best === undefined || key.length > best.length) best = key;
  }
  return best !== undefined ? policy[best] : policy["*"];
}

/** One policy's answer for a call, or undefined when it has no rule for the tool. */
/** What one call looks like to every policy: parsed once (bash) or its normalised path. */
interface CallView {
  tool: string;
  subject: string;
  shell?: ShellAnalysis;
}

function verdictOf(policy: Policy, view: CallView): Verdict | undefined {
  const rule = ruleFor(policy, view.tool);
  if (rule === undefined) return undefined;
  if (typeof rule === "string") return rule;
  if (view.shell) return shellVerdict(view.shell, view.subject, rule);
  if (PATH_TOOLS.has(view.tool)) {
    if (pathHit(rule.deny, view.subject, true)) return "deny";
    if (pathHit(rule.allow, view.subject, false)) return "allow";
    if (pathHit(rule.ask, view.subject, false)) return "ask";
    return rule.default;
  }
  const hit = (list: Patterns) => list?.some((p) => matchesPattern(p, view.subject));
  if (hit(rule.deny)) return "deny";
  if (hit(rule.allow)) return "allow";
  if (hit(rule.ask)) return "ask";
  return rule.default;
}

export interface PolicyAnswer {
  verdict: Verdict;
  subject: string;
  /** For bash: why no allow pattern or tree rule can cover the command (empty: none). */
  opaque: string[];
}

/**
 * The verdict for `tool` called with `args` under the config's policy (over the defaults) and the
 * agent's chain of narrowing policies (profiles, inherited by forks): the strictest one wins.
 * `settings`: Claude Code's rules (claude-rules.ts, from settings.json files): their deny and ask
 * apply over everything, their allow only where the config's policy has no rule for the tool (it
 * stands in for warren's defaults, never for the person's own config). Paths are normalised
 * against `cwd` when given. For `bash` the shell parser must be loaded in this thread
 * (`await loadShellParser()` first; decideCall does both).
 */
export function decide(
  base: Policy | undefined,
  chain: readonly Policy[],
  tool: string,
  args: unknown,
  cwd?: string,
  settings?: readonly SettingsRule[],
): PolicyAnswer {
  const subject = callSubject(tool, args, cwd);
  const view: CallView = { tool, subject };
  if (tool === "bash") view.shell = analyseShell(subject);
  const fromSettings = settingsVerdict(settings, { ...view, ...(cwd !== undefined && { cwd }) });
  // The config's rule for the tool (or its "*"), where it has one that answers; else the
  // settings' allow; else the default.
  const own = ruleFor(base, tool);
  let verdict: Verdict =
    (own === undefined ? undefined : verdictOf({ [tool]: own }, view)) ??
    (fromSettings === "allow" ? "allow" : undefined) ??
    verdictOf(DEFAULT_POLICY, view)!;
  for (const policy of chain) {
    const v = verdictOf(policy, view);
    if (v !== undefined && RANK[v] > RANK[verdict]) verdict = v;
  }
  if (fromSettings !== undefined && RANK[fromSettings] > RANK[verdict]) verdict = fromSettings;
  return { verdict, subject, opaque: view.shell?.opaque ?? [] };
}

/** decide, after loading the shell parser in this thread if it is not yet. */
export async function decideCall(...call: Parameters<typeof decide>): Promise<PolicyAnswer> {
  const [, , tool] = call;
  if (tool === "bash" && !shellParserLoaded()) await loadShellParser();
  return decide(...call);
}

/**
 * Whether allow `rules` (a skill's allowed-tools) cover the call: a bash command only when every
 * simple command of it matches one and nothing in it is opaque, as settings allow rules are read.
 * Loads the shell parser for bash when this thread has not yet.
 */
export async function rulesCover(
  rules: readonly SettingsRule[],
  tool: string,
  args: unknown,
  cwd?: string,
): Promise<boolean> {
  if (tool === "bash" && !shellParserLoaded()) await loadShellParser();
  const subject = callSubject(tool, args, cwd);
  const call = {
    tool,
    subject,
    ...(tool === "bash" && { shell: analyseShell(subject) }),
    ...(cwd !== undefined && { cwd }),
  };
  return settingsVerdict(rules, call) === "allow";
}
