// Skills (SPEC section 9): folders holding a SKILL.md (YAML front matter `name`, `description`,
// `allowed-tools`, `disable-model-invocation`; the body is the skill's instructions) in
// ~/.claude/skills, ~/.codex/skills, the project's .warren/skills and .claude/skills /
// .agents/skills from the working directory up to the repository root. The model is offered only
// each skill's name and description (skillsPromptBlock); the body and the folder's files reach it
// when it calls the `skill` tool (tools/skill.ts). A skill that cannot be used is one warning. A
// project's SKILL.md waits for the person's trust (sources.ts heldForTrust); `allowed-tools` is
// read into allow rules that narrow the agent while the skill is in use (runtime/skill-scope.ts).
import fs from "node:fs";
import path from "node:path";
import { parseClaudeRule, type SettingsRule } from "../policy/claude-rules.js";
import { parseFrontMatter, stringField } from "./front-matter.js";
import {
  clearRescanned,
  heldForTrust,
  homeOf,
  projectRoot,
  rescanned,
  shownPath,
  sourcesFor,
  type HeldFile,
  type Source,
} from "./sources.js";

type Env = Record<string, string | undefined>;

export interface Skill extends Partial<AllowedTools> {
  name: string;
  description: string;
  /** The folder and its SKILL.md. */
  dir: string;
  file: string;
  source: Source;
  /** `disable-model-invocation: true`: only the person runs it (as /name). */
  modelInvocable: boolean;
}

export interface SkillSet {
  /** By name, the first found winning (the person's own folders first). */
  skills: Skill[];
  warnings: string[];
  /** The project's SKILL.md files waiting for the person's trust (not offered, not run). */
  held: HeldFile[];
}

const FIELDS = new Set([
  "name",
  "description",
  "allowed-tools",
  "disable-model-invocation",
  // Claude Code's and Codex's fields warren reads past without a warning.
  "license",
  "metadata",
  "version",
  "model",
  "argument-hint",
  "user-invocable",
  "when_to_use",
]);
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function skillSources(cwd: string, env: Env = process.env): Source[] {
  return sourcesFor(cwd, env, {
    user: [".claude/skills", ".codex/skills"],
    own: ".warren/skills",
    project: [".claude/skills", ".agents/skills"],
  });
}

function subfolders(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() || e.isSymbolicLink())
      .map((e) => e.name)
      .filter((n) => !n.startsWith("."))
      .sort();
  } catch {
    return [];
  }
}

/** One SKILL.md → its skill, or undefined after one warning. */
export function parseSkill(
  file: string,
  text: string,
  source: Source,
  warnings: string[],
  env: Env = process.env,
): Skill | undefined {
  const shown = shownPath(file, env);
  const warn = (line: number, message: string) => {
    warnings.push(`${shown}:${line}: ${message}`);
    return undefined;
  };
  const parsed = parseFrontMatter(text);
  if (!parsed.ok) return warn(parsed.line, parsed.message);
  if (!parsed.hasFrontMatter) {
    return warn(1, "no front matter: a SKILL.md starts with --- and names its description");
  }
  const { data } = parsed;
  for (const key of Object.keys(data)) {
    if (!FIELDS.has(key)) warnings.push(`${shown}: unknown field "${key}" ignored`);
  }
  const dir = path.dirname(file);
  const name = stringField(data, "name") ?? path.basename(dir);
  if (name === null || !NAME.test(name)) {
    return warn(2, `"name" must be letters, digits, "-", "_" or "." (a /command name)`);
  }
  const description = stringField(data, "description");
  if (!description) return warn(2, `"description" is required: it is what the model is offered`);
  const disable = data["disable-model-invocation"];
  if (disable !== undefined && typeof disable !== "boolean") {
    return warn(2, `"disable-model-invocation" must be true or false`);
  }
  const allowed = allowedToolsField(data, `skill "${name}"`, dir, warnings, env);
  if (allowed === null) return warn(2, ALLOWED_TOOLS_FORM);
  return {
    name,
    description,
    dir,
    file,
    source,
    modelInvocable: disable !== true,
    ...allowed,
  };
}

/** What a narrowing file (a skill, a command file) lists in `allowed-tools`, mapped to rules. */
export interface AllowedTools {
  /** `allowed-tools` as written: the tools the agent may call while the file is in use. */
  allowedTools: string[];
  /**
   * `allowedTools` as allow rules (claude-rules.ts): while the file is in use a call none of them
   * covers is refused (runtime/skill-scope.ts). An entry warren cannot map is one warning and
   * allows nothing, so the list only ever narrows.
   */
  allowedRules: SettingsRule[];
}

export const ALLOWED_TOOLS_FORM = `"allowed-tools" must be a comma-separated string or a list`;

/**
 * A front matter's `allowed-tools` for `what` (`skill "git"`, `command "/review"`): empty when
 * absent, null when it is neither text nor a list of text (the caller's one warning: the file is
 * not used, since using it unnarrowed would widen what its author meant).
 */
export function allowedToolsField(
  data: Record<string, unknown>,
  what: string,
  dir: string,
  warnings: string[],
  env: Env,
): AllowedTools | Record<string, never> | null {
  const tools = data["allowed-tools"];
  if (tools === undefined || tools === null) return {};
  const listed =
    typeof tools === "string"
      ? splitToolList(tools)
      : Array.isArray(tools) && tools.every((t) => typeof t === "string")
        ? (tools as string[])
        : undefined;
  if (!listed) return null;
  const allowedTools = listed.map((t) => t.trim()).filter(Boolean);
  return { allowedTools, allowedRules: toolRules(what, allowedTools, dir, warnings, env) };
}

/**
 * `Read, Grep, Bash(git status:*)` or `Bash(git add:*) Bash(git commit:*)`: split on commas and
 * spaces outside parentheses (a Bash pattern holds spaces).
 */
export function splitToolList(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let word = "";
  for (const c of text) {
    if (c === "(") depth++;
    else if (c === ")") depth = Math.max(0, depth - 1);
    if (depth === 0 && (c === "," || /\s/.test(c))) {
      if (word) out.push(word);
      word = "";
    } else word += c;
  }
  if (word) out.push(word);
  return out;
}

/** `allowed-tools` of `what` as allow rules; one warning per entry warren cannot map. */
function toolRules(
  what: string,
  listed: readonly string[],
  dir: string,
  warnings: string[],
  env: Env,
): SettingsRule[] {
  const source = `${what} allowed-tools`;
  const base = { root: projectRoot(dir), cwd: projectRoot(dir), home: homeOf(env) };
  const rules: SettingsRule[] = [];
  for (const text of listed) {
    const rule = parseClaudeRule(text, "allow", source, base);
    if ("warning" in rule)
      warnings.push(`${rule.warning} (that tool stays refused while it is in use)`);
    else rules.push(rule);
  }
  return rules;
}

function scan(cwd: string, env: Env): SkillSet {
  const warnings: string[] = [];
  const held: HeldFile[] = [];
  const byName = new Map<string, Skill>();
  for (const source of skillSources(cwd, env)) {
    for (const folder of subfolders(source.dir)) {
      const file = path.join(source.dir, folder, "SKILL.md");
      let text: string;
      try {
        text = fs.readFileSync(file, "utf8");
      } catch {
        continue; // a folder without SKILL.md is not a skill
      }
      if (heldForTrust(source, file, text, env, held)) continue;
      const skill = parseSkill(file, text, source, warnings, env);
      if (!skill) continue;
      const first = byName.get(skill.name);
      if (first) {
        warnings.push(
          `skill "${skill.name}" in ${shownPath(file, env)} ignored: ${shownPath(first.file, env)} has the same name`,
        );
        continue;
      }
      byName.set(skill.name, skill);
    }
  }
  return { skills: [...byName.values()], warnings, held };
}

const cachedSkills = rescanned(scan);

/**
 * The skills for an agent working in `cwd`, rescanned at most every 2 s per thread, and at once
 * when the person trusted something since (a folder trusted mid-session counts from the next turn).
 */
export function skillsFor(cwd: string, env: Env = process.env, rescanMs?: number): SkillSet {
  return cachedSkills(cwd, env, rescanMs);
}

/** Forgets what was read (tests): the skills and the command files. */
export function clearSkillsCache(): void {
  clearRescanned();
}

/** The skill's instructions as they are on disk now (front matter left out). */
export function skillBody(skill: Skill): string {
  const parsed = parseFrontMatter(fs.readFileSync(skill.file, "utf8"));
  return parsed.ok ? parsed.body.trim() : "";
}

const MAX_FILES = 100;

/** The folder's other files, relative to it (at most 100, 4 levels deep). */
export function skillFiles(skill: Skill): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (out.length >= MAX_FILES || entry.name.startsWith(".")) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (depth < 4) walk(full, depth + 1);
      } else if (entry.isFile() && full !== skill.file) {
        out.push(path.relative(skill.dir, full));
      }
    }
  };
  walk(skill.dir, 1);
  return out;
}

/** Characters per token, for sizing the list against the context window. */
const CHARS_PER_TOKEN = 4;
/** The share of the context window the list may take (as Codex sizes its own). */
export const SKILLS_SHARE = 0.02;

/**
 * The system prompt's lines offering `skills` to the model (those it may invoke), at most 2 % of
 * a `contextWindow`-token window; a longer list is cut with a note saying how many were left out.
 */
export function skillsPromptBlock(skills: readonly Skill[], contextWindow: number): string {
  const offered = skills.filter((s) => s.modelInvocable);
  if (offered.length === 0) return "";
  const budget = Math.floor(contextWindow * SKILLS_SHARE * CHARS_PER_TOKEN);
  const head =
    "Skills: instructions for particular tasks, loaded when you call the skill tool with the " +
    "skill's name. Use one when the task matches its description.";
  const lines: string[] = [];
  let size = head.length;
  for (const skill of offered) {
    const line = `- ${skill.name}: ${skill.description.replace(/\s+/g, " ")}`;
    if (size + line.length + 1 > budget) break;
    lines.push(line);
    size += line.length + 1;
  }
  const left = offered.length - lines.length;
  const note =
    left > 0
      ? [`[${left} more skill(s) not listed: the list is capped at 2% of the context window]`]
      : [];
  return [head, ...lines, ...note].join("\n");
}
