// Claude Code's permission rules (`permissions.allow|ask|deny` in its settings.json), read into
// rules warren's policy applies (SPEC §9). `Tool` or `Tool(specifier)`:
// - `Bash(npm run test:*)` (a prefix, on a word boundary), `Bash(git diff *)`, `Bash(ls)`: a bash
//   command pattern, matched as warren matches its own (commands.ts: every simple command of a
//   compound line, a deny's options in any order, an unresolvable program denied).
// - `Read(…)` (read_file, glob, grep), `Edit(…)` (edit_file, write_file), `Write(…)` (write_file):
//   a gitignore-style path (`*` within a folder, `**` across folders): `//abs` from the root,
//   `~/x` from home, `/x` from the settings' project folder, `./x` or `x` from the working
//   directory; a pattern without a `/` matches that name in any folder below; a folder matched
//   covers what is inside it.
// - `mcp__server`, `mcp__server__*`, `mcp__server__tool`: MCP tools by name.
// What warren has no tool for (`WebFetch`, `WebSearch`, …) or cannot read is a warning naming it.
import os from "node:os";
import path from "node:path";
import { shellVerdict } from "./commands.js";
import { matchesPattern } from "./patterns.js";
import type { ShellAnalysis } from "./shell.js";
import { PATH_TOOLS } from "./subject.js";
import type { Verdict } from "./types.js";

/** One rule as warren applies it; plain data (crosses to worker threads). */
export type SettingsRule = { verdict: Verdict; text: string; source: string } & (
  | { kind: "tool"; tools: string[] }
  | { kind: "bash"; pattern: string }
  | {
      kind: "path";
      tools: string[];
      /** Absolute, anchored where warren started. */
      glob: string;
      /** For `./x` and bare paths: the glob relative to the agent's own working directory too. */
      inCwd?: string;
    }
);

/** Where a rule's relative paths start. */
export interface RuleBase {
  /** The project folder (the one holding `.claude/`), or home for the person's own file. */
  root: string;
  /** The working directory warren started in. */
  cwd: string;
  home?: string;
}

/** Claude Code's tool names with no specifier: warren's tools they stand for. */
const WHOLE_TOOLS: Record<string, string[]> = {
  Bash: ["bash"],
  Read: ["read_file", "glob", "grep"],
  Edit: ["edit_file", "write_file"],
  MultiEdit: ["edit_file"],
  Write: ["write_file"],
  Glob: ["glob"],
  Grep: ["grep"],
  Task: ["fork"],
  Agent: ["fork"],
};

/** The path rules' tools: Read covers every reading tool, Edit every writing one. */
const PATH_RULE_TOOLS: Record<string, string[]> = {
  Read: ["read_file", "glob", "grep"],
  Edit: ["edit_file", "write_file"],
  Write: ["write_file"],
  Glob: ["glob"],
  Grep: ["grep"],
};

const NOT_IN_WARREN = new Set([
  "WebFetch",
  "WebSearch",
  "NotebookEdit",
  "NotebookRead",
  "TodoWrite",
  "LS",
  "KillShell",
  "KillBash",
  "BashOutput",
  "SlashCommand",
  "Skill",
  "ExitPlanMode",
]);

/**
 * One rule string from `source` (a file and its list, e.g. `.claude/settings.json permissions.deny`)
 * as warren applies it, or the one-line warning saying why it is not applied.
 */
export function parseClaudeRule(
  text: unknown,
  verdict: Verdict,
  source: string,
  base: RuleBase,
): SettingsRule | { warning: string } {
  const skip = (why: string) => ({
    warning: `${source}: ${JSON.stringify(text)} is not applied: ${why}`,
  });
  if (typeof text !== "string" || text.trim() === "") return skip("a rule is a non-empty string");
  const rule = text.trim();
  const common = { verdict, text: rule, source };
  const m = /^([A-Za-z_][A-Za-z0-9_*-]*)(?:\((.*)\))?$/s.exec(rule);
  if (!m) return skip('warren reads "Tool" or "Tool(specifier)"');
  const tool = m[1]!;
  const spec = m[2];
  if (tool.startsWith("mcp__")) {
    if (spec !== undefined) return skip("an MCP rule names a server or a tool, nothing in ()");
    const parts = tool.split("__");
    // `mcp__server` is every tool of that server.
    const name = parts.length === 2 ? `${tool}__*` : tool;
    return { ...common, kind: "tool", tools: [name] };
  }
  if (NOT_IN_WARREN.has(tool)) return skip(`warren has no ${tool} tool`);
  if (spec === undefined || spec.trim() === "*" || spec.trim() === "**") {
    const tools = WHOLE_TOOLS[tool];
    if (!tools) return skip(`warren has no tool it could map ${tool} to`);
    return { ...common, kind: "tool", tools };
  }
  if (tool === "Bash") {
    const pattern = bashPattern(spec);
    if (pattern === undefined) return skip('":*" may only end the pattern');
    return { ...common, kind: "bash", pattern };
  }
  const pathTools = PATH_RULE_TOOLS[tool];
  if (pathTools) {
    const glob = absoluteGlob(spec.trim(), base);
    if (glob === undefined) return skip("an empty path");
    const inCwd = cwdRelative(spec.trim());
    return {
      ...common,
      kind: "path",
      tools: pathTools,
      glob,
      ...(inCwd !== undefined && { inCwd }),
    };
  }
  return skip(`warren cannot apply ${tool}(…) rules`);
}

/** `npm run test:*` → `npm run test *` (warren's ` *` is optional at the end: a word boundary). */
export function bashPattern(spec: string): string | undefined {
  const s = spec.trim().replace(/\s+/g, " ");
  if (s.endsWith(":*")) {
    const prefix = s.slice(0, -2).trimEnd();
    if (prefix.includes(":*")) return undefined;
    return prefix === "" ? "*" : `${prefix} *`;
  }
  if (s.includes(":*")) return undefined;
  return s;
}

/** A rule's path as an absolute gitignore-style glob (posix). */
export function absoluteGlob(spec: string, base: RuleBase): string | undefined {
  if (spec === "") return undefined;
  const home = base.home ?? os.homedir();
  const posix = (p: string) => p.replace(/\\/g, "/");
  let anchored: string;
  if (spec.startsWith("//")) anchored = spec.slice(1);
  else if (spec === "~" || spec.startsWith("~/"))
    anchored = path.posix.join(posix(home), spec.slice(1));
  else if (spec.startsWith("/")) anchored = path.posix.join(posix(base.root), spec);
  else if (spec.startsWith("./")) anchored = path.posix.join(posix(base.cwd), spec.slice(2));
  else if (!spec.replace(/\/+$/, "").includes("/")) {
    // gitignore: a name without a slash matches in any folder below.
    anchored = path.posix.join(posix(base.cwd), "**", spec);
  } else anchored = path.posix.join(posix(base.cwd), spec);
  return anchored.length > 1 ? anchored.replace(/\/+$/, "") : anchored;
}

/**
 * A `./x` or bare rule relative to a working directory (a bare name in any folder below), so an agent
 * working elsewhere (a worktree child) meets the rule where it works; undefined for anchored ones.
 */
function cwdRelative(spec: string): string | undefined {
  if (spec.startsWith("/") || spec === "~" || spec.startsWith("~/")) return undefined;
  const rel = (spec.startsWith("./") ? spec.slice(2) : spec).replace(/\/+$/, "");
  if (rel === "" || rel === ".") return "";
  return rel.includes("/") ? rel : `**/${rel}`;
}

const compiled = new Map<string, RegExp>();

/** gitignore-style: `**` any folders, `*` and `?` within one name. */
function globRegExp(glob: string): RegExp {
  let re = compiled.get(glob);
  if (re) return re;
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      const slash = glob[i + 2] === "/";
      out += slash ? "(?:.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else out += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  re = new RegExp(`^${out}$`);
  compiled.set(glob, re);
  return re;
}

/** Does the glob match `file` or a folder it lies in (a matched folder covers its contents)? */
export function globCovers(glob: string, file: string): boolean {
  const re = globRegExp(glob);
  for (let at = file; ; at = path.posix.dirname(at)) {
    if (re.test(at)) return true;
    if (path.posix.dirname(at) === at) return false;
  }
}

/** What one call looks like to the rules (the same view decide builds). */
export interface RuleCall {
  tool: string;
  subject: string;
  shell?: ShellAnalysis;
  cwd?: string;
}

/** A rule that is not a bash pattern: does it cover the call? */
function hits(rule: SettingsRule, call: RuleCall): boolean {
  if (rule.kind === "tool") return rule.tools.some((t) => matchesPattern(t, call.tool));
  if (rule.kind === "bash") return false;
  if (!rule.tools.includes(call.tool) || !PATH_TOOLS.has(call.tool) || call.subject === "") {
    return false;
  }
  const cwd = (call.cwd ?? process.cwd()).replace(/\\/g, "/");
  const file = path.posix.resolve(cwd, call.subject);
  // A relative rule: where the agent works; a deny or ask also where warren started (stricter).
  const globs =
    rule.inCwd === undefined
      ? [rule.glob]
      : [
          path.posix.join(cwd, rule.inCwd).replace(/\/+$/, ""),
          ...(rule.verdict === "allow" ? [] : [rule.glob]),
        ];
  return globs.some(
    (glob) =>
      globCovers(glob, file) ||
      // glob and grep search inside their path: a deny or ask covering what is inside covers them.
      (rule.verdict !== "allow" && call.tool !== "read_file" && globCovers(glob, `${file}/\u0001`)),
  );
}

/**
 * The rules' answer for a call in Claude Code's order: any deny, else any ask, else any allow,
 * else undefined (they have no say).
 */
export function settingsVerdict(
  rules: readonly SettingsRule[] | undefined,
  call: RuleCall,
): Verdict | undefined {
  if (!rules?.length) return undefined;
  for (const verdict of ["deny", "ask", "allow"] as const) {
    const mine = rules.filter((r) => r.verdict === verdict);
    if (mine.some((r) => hits(r, call))) return verdict;
    if (call.tool !== "bash" || !call.shell) continue;
    // Bash patterns of one list together, as warren's own: a deny or an ask when any simple
    // command matches one, an allow only when every one is covered and nothing is opaque.
    const list = mine.flatMap((r) => (r.kind === "bash" ? [r.pattern] : []));
    if (
      list.length > 0 &&
      shellVerdict(call.shell, call.subject, { [verdict]: list }) === verdict
    ) {
      return verdict;
    }
  }
  return undefined;
}
