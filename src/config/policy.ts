// The tool policy: for each tool `allow`, `ask` or `deny`, with patterns for `bash` commands and
// file paths. A config's policy sits over the defaults (reads allowed, writes and bash asked); a
// profile's policy, and so a fork's, can only narrow it: every policy in an agent's chain is
// asked and the strictest answer wins (deny > ask > allow). A `bash` command is matched on its
// parse (shell.ts): every simple command, nothing opaque; a path after normalising it.
import path from "node:path";
import {
  analyseShell,
  collapse,
  loadShellParser,
  programName,
  shellParserLoaded,
  type ShellAnalysis,
} from "./shell.js";

export type Verdict = "allow" | "ask" | "deny";

/** One tool's rule: a verdict, or patterns (`*` = any run of characters) with a fallback. */
export type ToolRule =
  Verdict | { allow?: string[]; ask?: string[]; deny?: string[]; default?: Verdict };

/** Tool name (or "*", any tool not named) → rule. */
export type Policy = Record<string, ToolRule>;

/** What a new user gets: reading and the agent tools run, writing and commands are asked. */
export const DEFAULT_POLICY: Policy = {
  read_file: "allow",
  glob: "allow",
  grep: "allow",
  fork: "allow",
  send: "allow",
  wait: "allow",
  kill: "allow",
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

/** The tools whose subject is a file path (normalised against the agent's cwd before matching). */
const PATH_TOOLS = new Set(["read_file", "write_file", "edit_file", "glob", "grep"]);

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

/** A path as patterns see it: relative to `cwd` (posix separators) when inside it, else absolute. */
export function normalisePath(cwd: string, given: string): string {
  const absolute = path.posix.resolve(cwd, given.replace(/\\/g, "/"));
  const rel = path.posix.relative(path.posix.resolve(cwd), absolute);
  if (rel === "") return ".";
  if (rel === ".." || rel.startsWith("../") || path.posix.isAbsolute(rel)) return absolute;
  return rel;
}

/** `*` matches any run of characters, everything else itself; linear in practice. */
export function matchesPattern(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== "*" && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === "*") {
      star = p++;
      resume = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === "*") p++;
  return p === pattern.length;
}

/** A command pattern covers `text`, also without its trailing ` *` (`git log *` covers `git log`). */
function commandMatches(pattern: string, text: string): boolean {
  return matchesPattern(pattern, text) || matchesPattern(pattern, `${text} `);
}

/** A command pattern as written, whitespace collapsed and (for deny) its program normalised. */
function commandPattern(pattern: string, forDeny: boolean): string {
  const p = collapse(pattern);
  if (!forDeny) return p;
  const space = p.indexOf(" ");
  const first = space < 0 ? p : p.slice(0, space);
  if (first.includes("*")) return p;
  return programName(first.replace(/\\/g, "")) + (space < 0 ? "" : p.slice(space));
}

/** What one call looks like to every policy: parsed once (bash) or its normalised path. */
interface CallView {
  tool: string;
  subject: string;
  shell?: ShellAnalysis;
}

type Patterns = string[] | undefined;

/** Bash: a deny pattern matches any simple command (or the whole line, as before). */
function shellDenied(view: CallView, list: Patterns): boolean {
  if (!list?.length) return false;
  const line = collapse(view.subject);
  const folded = line.normalize("NFKC");
  return list.some((raw) => {
    const p = commandPattern(raw, true);
    return (
      commandMatches(p, line) ||
      commandMatches(p, folded) ||
      view.shell!.commands.some((c) => commandMatches(p, c.denyText) || optionsCovered(p, c.words))
    );
  });
}

/**
 * A deny pattern's options in any order, bundled or apart: `rm -rf *` also denies `rm -fr x`,
 * `rm -r -f x`, `rm x -Rf` and `rm --recursive --force x`. The command must carry every option the
 * pattern names (short ones one letter each, `--x=v` whole), and its other words, in order, must
 * match the pattern's other words. Only a pattern with an option and a literal program is read so.
 */
function optionsCovered(pattern: string, words: string[]): boolean {
  const [program, ...rest] = pattern.split(" ");
  if (!program || program.includes("*") || !rest.some(isOption)) return false;
  if (words[0] !== program) return false;
  const want = splitOptions(program, rest);
  const have = splitOptions(program, words.slice(1));
  if (![...want.options].every((o) => have.options.has(o))) return false;
  return commandMatches(want.operands.join(" "), have.operands.join(" "));
}

const isOption = (word: string): boolean => /^-[^-*]|^--[^*]/.test(word);

/** Long options some programs spell as a letter too (`rm --force` is `rm -f`). */
const LONG_AS_SHORT: Record<string, Record<string, string>> = {
  rm: { "--recursive": "-r", "--force": "-f", "-R": "-r" },
  cp: { "--recursive": "-r", "--force": "-f", "-R": "-r" },
  chmod: { "--recursive": "-R" },
  chown: { "--recursive": "-R" },
  git: { "--force": "-f" },
};

/** A command's options as a set (`--` ends them) and its other words in order. */
function splitOptions(program: string, words: string[]) {
  const aliases = LONG_AS_SHORT[program] ?? {};
  const options = new Set<string>();
  const operands: string[] = [];
  let ended = false;
  for (const word of words) {
    if (word === "--" && !ended) ended = true;
    else if (ended || !isOption(word)) operands.push(word);
    else if (word.startsWith("--")) options.add(aliases[word] ?? word);
    else for (const letter of word.slice(1)) options.add(aliases[`-${letter}`] ?? `-${letter}`);
  }
  return { options, operands };
}

/** Bash: allowed only when every simple command is, and nothing is opaque. */
function shellAllowed(view: CallView, list: Patterns): boolean {
  if (!list?.length) return false;
  const shell = view.shell!;
  if (shell.opaque.length > 0) return false;
  const patterns = list.map((p) => commandPattern(p, false));
  if (shell.commands.length === 0) {
    return patterns.some((p) => matchesPattern(p, view.subject.trim()));
  }
  return shell.commands.every((c) => patterns.some((p) => commandMatches(p, c.allowText)));
}

/** Bash: asked when any simple command matches an ask pattern. */
function shellAsked(view: CallView, list: Patterns): boolean {
  if (!list?.length) return false;
  const patterns = list.map((p) => commandPattern(p, false));
  return view.shell!.commands.some((c) => patterns.some((p) => commandMatches(p, c.allowText)));
}

/** Paths: a deny pattern without a `/` also matches the base name (`.env` denies `a/.env`). */
function pathHit(list: Patterns, subject: string, forDeny: boolean): boolean {
  if (!list?.length) return false;
  const base = path.posix.basename(subject);
  return list.some((raw) => {
    const p = raw.startsWith("./") ? raw.slice(2) : raw;
    return matchesPattern(p, subject) || (forDeny && !p.includes("/") && matchesPattern(p, base));
  });
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
function verdictOf(policy: Policy, view: CallView): Verdict | undefined {
  const rule = ruleFor(policy, view.tool);
  if (rule === undefined) return undefined;
  if (typeof rule === "string") return rule;
  if (view.shell) {
    if (shellDenied(view, rule.deny)) return "deny";
    if (shellAllowed(view, rule.allow)) return "allow";
    if (shellAsked(view, rule.ask)) return "ask";
    // A fallback of allow cannot vouch for what the parse cannot see (a deny may be hidden there).
    if (rule.default === "allow" && view.shell.opaque.length > 0) return "ask";
    return rule.default;
  }
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
 * Paths are normalised against `cwd` when given. For `bash` the shell parser must be loaded in
 * this thread (`await loadShellParser()` first; decideCall does both).
 */
export function decide(
  base: Policy | undefined,
  chain: readonly Policy[],
  tool: string,
  args: unknown,
  cwd?: string,
): PolicyAnswer {
  const subject = callSubject(tool, args, cwd);
  const view: CallView = { tool, subject };
  if (tool === "bash") view.shell = analyseShell(subject);
  // The config's rule for the tool (or its "*"), where it has one that answers; else the default.
  const own = ruleFor(base, tool);
  let verdict: Verdict =
    (own === undefined ? undefined : verdictOf({ [tool]: own }, view)) ??
    verdictOf(DEFAULT_POLICY, view)!;
  for (const policy of chain) {
    const v = verdictOf(policy, view);
    if (v !== undefined && RANK[v] > RANK[verdict]) verdict = v;
  }
  return { verdict, subject, opaque: view.shell?.opaque ?? [] };
}

/** decide, after loading the shell parser in this thread if it is not yet. */
export async function decideCall(
  base: Policy | undefined,
  chain: readonly Policy[],
  tool: string,
  args: unknown,
  cwd?: string,
): Promise<PolicyAnswer> {
  if (tool === "bash" && !shellParserLoaded()) await loadShellParser();
  return decide(base, chain, tool, args, cwd);
}

/** Separates the rules of one tree rule (one per simple command of a compound command). */
const RULE_SEPARATOR = "\n";

/**
 * The narrowest rule "allow for the tree" stores for a call, or "" when the call can only be
 * allowed once (bash with opaque parts). Bash: one rule per simple command — the program and its
 * subcommand (`git status *`) when the first argument is a plain word, else the command exactly
 * (`rm -rf build`); never `cd *` nor a bare `*`. A file tool: the path's directory (`src/*`), or
 * the file itself at the top of the working directory. Another tool without a subject: `*` (its
 * every call; the rule is per tool).
 */
export function treePattern(tool: string, subject: string): string {
  if (tool === "bash") {
    const shell = analyseShell(subject);
    if (shell.opaque.length > 0 || shell.commands.length === 0) return "";
    const rules: string[] = [];
    for (const c of shell.commands) {
      const rule = commandRule(c.words, c.allowText);
      if (!rules.includes(rule)) rules.push(rule);
    }
    return rules.join(RULE_SEPARATOR);
  }
  if (PATH_TOOLS.has(tool) && subject !== "") {
    const dir = path.posix.dirname(subject);
    if (dir === "." || dir === "/") return subject;
    return `${dir}/*`;
  }
  return subject === "" ? "*" : subject;
}

const SUBCOMMAND = /^[A-Za-z][A-Za-z0-9._:-]*$/;

function commandRule(words: string[], allowText: string): string {
  const program = allowText.split(" ")[0] ?? words[0]!;
  const first = words[1];
  if (first !== undefined && SUBCOMMAND.test(first) && !/^(cd|pushd|popd)$/.test(words[0]!)) {
    return `${program} ${first} *`;
  }
  // The command exactly: newlines inside a quoted word would split the rule, so they match any run.
  return allowText.replace(/\n/g, "*");
}

/** The rules of a stored tree rule. */
export function treeRules(pattern: string): string[] {
  return pattern.split(RULE_SEPARATOR).filter((r) => r !== "");
}

/** A tree rule as shown to a person: its rules joined by " · ". */
export function shownTreeRule(pattern: string): string {
  return treeRules(pattern).join(" · ");
}

/**
 * Do a tree's stored rules (the patterns of every "allow for the tree" of this tool) cover this
 * call's subject? Bash: every simple command must match one of the rules, nothing opaque.
 */
export function treeRulesCover(
  tool: string,
  patterns: readonly string[],
  subject: string,
): boolean {
  const rules = patterns.flatMap(treeRules);
  if (rules.length === 0) return false;
  if (tool === "bash") {
    const shell = analyseShell(subject);
    if (shell.opaque.length > 0 || shell.commands.length === 0) return false;
    return shell.commands.every((c) => rules.some((r) => commandMatches(r, c.allowText)));
  }
  return rules.some((r) => matchesPattern(r, subject));
}

/** Does one remembered tree pattern cover this call's subject? */
export function treePatternCovers(pattern: string, subject: string, tool = "bash"): boolean {
  return treeRulesCover(tool, [pattern], subject);
}
