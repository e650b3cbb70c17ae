// A `bash` call against one rule's patterns: denied when any simple command matches a deny
// pattern, allowed only when every simple command matches an allow pattern and nothing is opaque.
import { collapse, type ShellAnalysis } from "./shell.js";
import { commandMatches, commandPattern, matchesPattern, type Patterns } from "./patterns.js";
import type { ToolRule, Verdict } from "./types.js";

/**
 * Bash: a deny pattern matches any simple command (or the whole line, as before), its program
 * resolved as bash would (the base name of `/usr/bin/rm` or `./rm`). A program the parse cannot
 * name statically (an expansion, a brace, a glob, a quote or escape in it: `$x`, `{rm,-rf,d}`,
 * `/bin/r?`, `r''m`) matches every deny pattern; so does a command of the pattern's program whose
 * words are not all fixed (`rm $opts d`, `rm *` under `rm -rf *`: either may become `-rf`).
 */
function shellDenied(shell: ShellAnalysis, subject: string, list: Patterns): boolean {
  if (!list?.length) return false;
  if (shell.unresolved || shell.commands.some((c) => !c.resolved)) return true;
  const line = collapse(subject);
  const folded = line.normalize("NFKC");
  // A command that is not plain may hide a program from the parse (tree-sitter reads `ls⏎\rm` as
  // one `ls`): one that names a denied program anywhere, quotes and escapes removed, is denied.
  const named = shell.plain ? undefined : folded.replace(/[\\'"]/g, "");
  return list.some((raw) => {
    const p = commandPattern(raw, true);
    return (
      (named !== undefined && namesProgram(named, p)) ||
      commandMatches(p, line) ||
      commandMatches(p, folded) ||
      shell.commands.some(
        (c) =>
          commandMatches(p, c.denyText) ||
          optionsCovered(p, c.words) ||
          (!c.fixed && c.words[0] === programOf(p)),
      )
    );
  });
}

/** Does `text` hold the pattern's leading literal words (`rm`, `git push`) as whole words? */
function namesProgram(text: string, pattern: string): boolean {
  const lead: string[] = [];
  for (const word of pattern.split(" ")) {
    if (word === "" || word.includes("*") || word.startsWith("-")) break;
    lead.push(word.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  }
  if (lead.length === 0) return false;
  return new RegExp(`(^|[^A-Za-z0-9_.-])${lead.join("\\s+")}($|[^A-Za-z0-9_.-])`).test(text);
}

/** A pattern's program when it names one literally (`rm -rf *` → rm), else undefined. */
function programOf(pattern: string): string | undefined {
  const first = pattern.split(" ")[0];
  return first && !first.includes("*") ? first : undefined;
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
function shellAllowed(shell: ShellAnalysis, subject: string, list: Patterns): boolean {
  if (!list?.length) return false;
  if (shell.opaque.length > 0) return false;
  const patterns = list.map((p) => commandPattern(p, false));
  if (shell.commands.length === 0) {
    return patterns.some((p) => matchesPattern(p, subject.trim()));
  }
  return shell.commands.every((c) => patterns.some((p) => commandMatches(p, c.allowText)));
}

/** Bash: asked when any simple command matches an ask pattern. */
function shellAsked(shell: ShellAnalysis, list: Patterns): boolean {
  if (!list?.length) return false;
  const patterns = list.map((p) => commandPattern(p, false));
  return shell.commands.some((c) => patterns.some((p) => commandMatches(p, c.allowText)));
}

/** One rule's answer for a parsed `bash` command (undefined: the rule has no say). */
export function shellVerdict(
  shell: ShellAnalysis,
  subject: string,
  rule: Exclude<ToolRule, Verdict>,
): Verdict | undefined {
  if (shellDenied(shell, subject, rule.deny)) return "deny";
  if (shellAllowed(shell, subject, rule.allow)) return "allow";
  if (shellAsked(shell, rule.ask)) return "ask";
  // A fallback of allow cannot vouch for what the parse cannot see (a deny may be hidden there).
  if (rule.default === "allow" && shell.opaque.length > 0) return "ask";
  return rule.default;
}
