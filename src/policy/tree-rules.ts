// "Allow for the tree": the narrowest rule a person's answer stores for a call, and whether a
// tree's stored rules cover a later call.
import path from "node:path";
import { analyseShell } from "./shell.js";
import { commandMatches, matchesPattern } from "./patterns.js";
import { PATH_TOOLS } from "./subject.js";

/** Separates the rules of one tree rule (one per simple command of a compound command). */
const RULE_SEPARATOR = "\n";

/**
 * The narrowest rule "allow for the tree" stores for a call, or "" when the call can only be
 * allowed once (bash with opaque parts). Bash: one rule per simple command — the program and its
 * subcommand (`git status *`) when the first argument is a plain word, else the command exactly
 * (`rm -rf build`); never `cd *` nor a bare `*`. A file tool: the path's directory (`src/*`), or
 * the file itself at the top of the working directory. Any other tool: `*`, the tool with any
 * arguments — never a rule keyed on one of its fields (issue 38: a rule keyed on an MCP call's
 * `path` let any `command` beside it through).
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
  return ANY_ARGUMENTS;
}

/** The one tree rule of a tool other than bash and the file tools: any arguments. */
const ANY_ARGUMENTS = "*";

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

/** A tree rule as shown to a person: its rules joined by " · "; `tool(*)` for any arguments. */
export function shownTreeRule(pattern: string, tool?: string): string {
  if (tool !== undefined && !isBashOrFileTool(tool)) {
    return pattern === ANY_ARGUMENTS ? `${tool}(*), any arguments` : `${tool}(${pattern})`;
  }
  return treeRules(pattern).join(" · ");
}

const isBashOrFileTool = (tool: string): boolean => tool === "bash" || PATH_TOOLS.has(tool);

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
  if (PATH_TOOLS.has(tool)) return rules.some((r) => matchesPattern(r, subject));
  // Any other tool: only "any arguments" covers a call; a rule stored keyed on one field (before
  // issue 38) covers nothing.
  return rules.includes(ANY_ARGUMENTS);
}

/** Does one remembered tree pattern cover this call's subject? */
export function treePatternCovers(pattern: string, subject: string, tool = "bash"): boolean {
  return treeRulesCover(tool, [pattern], subject);
}
