// Command files (SPEC section 9): Markdown prompts the person runs as `/name ARGS` in the TUI or
// `warren -p "/name ARGS"`. Read from ~/.claude/commands, ~/.codex/prompts, the project's
// .warren/commands and .claude/commands from the working directory up to the repository root
// (the person's first; the first of a name wins). A file in a subfolder is namespaced as Claude
// Code's are: `frontend/test.md` is `/frontend:test`. Front matter (optional): `description`,
// `argument-hint`, `allowed-tools` (narrows the turn the person runs it, as a skill's does:
// runtime/skill-scope.ts; `model` is read past). Expansion: `$ARGUMENTS`, `$1`…`$9`, `` !`cmd` `` (its output, run by the
// caller through the policy) and `@path` (the file's content, inside the project only).
import fs from "node:fs";
import path from "node:path";
import { parseFrontMatter, stringField } from "./front-matter.js";
import { ALLOWED_TOOLS_FORM, allowedToolsField, type AllowedTools } from "./skills.js";
import {
  heldForTrust,
  projectRoot,
  rescanned,
  shownPath,
  sourcesFor,
  type HeldFile,
  type Source,
} from "./sources.js";

type Env = Record<string, string | undefined>;

export interface CommandFile extends Partial<AllowedTools> {
  /** The name typed after the slash (`review`, `frontend:test`). */
  name: string;
  description?: string;
  argumentHint?: string;
  file: string;
  source: Source;
  body: string;
}

export interface CommandSet {
  commands: CommandFile[];
  warnings: string[];
  /** The project's command files waiting for the person's trust (not offered as commands). */
  held: HeldFile[];
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
const MAX_DEPTH = 3;

export function commandSources(cwd: string, env: Env = process.env): Source[] {
  return sourcesFor(cwd, env, {
    user: [".claude/commands", ".codex/prompts"],
    own: ".warren/commands",
    project: [".claude/commands"],
  });
}

/** Markdown files under `dir`, relative, a few levels deep (Codex reads its top level only). */
function markdownFiles(dir: string, nested: boolean): string[] {
  const out: string[] = [];
  const walk = (at: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(at, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith(".")) continue;
      const full = path.join(at, entry.name);
      if (entry.isDirectory() && nested && depth < MAX_DEPTH) walk(full, depth + 1);
      else if (entry.isFile() && entry.name.endsWith(".md")) out.push(path.relative(dir, full));
    }
  };
  walk(dir, 1);
  return out;
}

/** One command file → its command, or undefined after one warning. */
export function parseCommandFile(
  file: string,
  name: string,
  text: string,
  source: Source,
  warnings: string[],
  env: Env = process.env,
): CommandFile | undefined {
  const shown = shownPath(file, env);
  const parsed = parseFrontMatter(text);
  if (!parsed.ok) {
    warnings.push(`${shown}:${parsed.line}: ${parsed.message}`);
    return undefined;
  }
  if (!NAME.test(name)) {
    warnings.push(`${shown}: "${name}" cannot be typed as a /command (letters, digits, - _ . :)`);
    return undefined;
  }
  const description = stringField(parsed.data, "description");
  const hint = stringField(parsed.data, "argument-hint");
  if (description === null) warnings.push(`${shown}: "description" must be text; ignored`);
  if (hint === null) warnings.push(`${shown}: "argument-hint" must be text; ignored`);
  const what = `command "/${name}"`;
  const allowed = allowedToolsField(parsed.data, what, path.dirname(file), warnings, env);
  if (allowed === null) {
    warnings.push(`${shown}: ${ALLOWED_TOOLS_FORM}; the file is not used`);
    return undefined;
  }
  return {
    name,
    ...(description ? { description } : {}),
    ...(hint ? { argumentHint: hint } : {}),
    file,
    source,
    body: parsed.body,
    ...allowed,
  };
}

/**
 * Every command file for `cwd`. `reserved` names (the built-in commands, skills) are never
 * shadowed: a file of such a name is one warning naming it.
 */
export function loadCommandFiles(
  cwd: string,
  env: Env = process.env,
  reserved: ReadonlySet<string> = new Set(),
): CommandSet {
  const warnings: string[] = [];
  const held: HeldFile[] = [];
  const byName = new Map<string, CommandFile>();
  for (const source of commandSources(cwd, env)) {
    const nested = !source.dir.endsWith(path.join(".codex", "prompts"));
    for (const rel of markdownFiles(source.dir, nested)) {
      const file = path.join(source.dir, rel);
      const name = rel.replace(/\.md$/, "").split(path.sep).join(":");
      let text: string;
      try {
        text = fs.readFileSync(file, "utf8");
      } catch {
        warnings.push(`${shownPath(file, env)}: cannot be read; skipped`);
        continue;
      }
      if (heldForTrust(source, file, text, env, held)) continue;
      const command = parseCommandFile(file, name, text, source, warnings, env);
      if (!command) continue;
      const key = name.toLowerCase();
      if (reserved.has(key)) {
        warnings.push(
          `${shownPath(file, env)}: /${name} is warren's own command; the file is not used`,
        );
        continue;
      }
      const first = byName.get(key);
      if (first) {
        warnings.push(
          `${shownPath(file, env)}: /${name} ignored, ${shownPath(first.file, env)} has the same name`,
        );
        continue;
      }
      byName.set(key, command);
    }
  }
  return { commands: [...byName.values()], warnings, held };
}

const cachedCommands = rescanned((cwd, env) => loadCommandFiles(cwd, env));

/**
 * The command files for an agent working in `cwd` (no name reserved), read as `skillsFor` reads
 * skills: at most every 2 s, and at once after a trust. What a tool call's gate looks up.
 */
export function commandFilesFor(cwd: string, env: Env = process.env): CommandSet {
  return cachedCommands(cwd, env);
}

/** A command as shown in /help and completion: `/review [area]`. */
export function commandUsage(name: string, hint?: string): string {
  return hint ? `/${name} ${hint}` : `/${name}`;
}

export interface ExpandOptions {
  /** The agent's working directory: `@path` is relative to it. */
  cwd: string;
  /** Runs a `` !`cmd` ``: its output for the prompt (the caller applies the policy). */
  shell?: (command: string) => Promise<string>;
  /** The largest file `@path` includes (bytes). */
  maxFileBytes?: number;
}

export interface Expanded {
  text: string;
  warnings: string[];
}

const SHELL = /!`([^`\n]+)`/g;
const AT_FILE = /(^|[\s(])@([^\s`'"()<>]+)/g;

/** Splits arguments as a shell would, roughly: quotes group words (for `$1`…`$9`). */
export function positionalArgs(text: string): string[] {
  const out: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (const m of text.matchAll(pattern)) out.push(m[1] ?? m[2] ?? m[3] ?? "");
  return out;
}

/**
 * The command's text for `args` (as typed after its name): placeholders replaced, `` !`cmd` ``
 * lines run through `shell`, `@path` files inside the project appended. Arguments are put in
 * after the other expansions, so text the person typed is never run or read as a file.
 */
export async function expandCommand(
  body: string,
  args: string,
  options: ExpandOptions,
): Promise<Expanded> {
  const warnings: string[] = [];
  let text = body;

  // 1. `!`cmd``: the file's own commands only (never argument text).
  const runs = [...text.matchAll(SHELL)];
  if (runs.length > 0) {
    const outputs: string[] = [];
    for (const run of runs) {
      const command = run[1]!.trim();
      if (!options.shell) {
        warnings.push(`!\`${command}\` not run: nothing here may run commands`);
        outputs.push(`[not run: ${command}]`);
        continue;
      }
      outputs.push((await options.shell(command)).trimEnd());
    }
    let i = 0;
    text = text.replace(SHELL, () => outputs[i++] ?? "");
  }

  // 2. `@path`: the file's content, appended once each, only inside the project.
  const root = projectRoot(options.cwd);
  const included: string[] = [];
  const seen = new Set<string>();
  for (const match of text.matchAll(AT_FILE)) {
    const ref = match[2]!.replace(/[.,;:!?]+$/, "");
    if (seen.has(ref)) continue;
    seen.add(ref);
    const full = path.resolve(options.cwd, ref);
    let real: string;
    try {
      real = fs.realpathSync(full);
      if (!fs.statSync(real).isFile()) continue;
    } catch {
      continue; // not a file (an @mention, an address): left as written
    }
    const rel = path.relative(fs.realpathSync(root), real);
    if (rel.startsWith("..") || path.isAbsolute(rel)) {
      warnings.push(`@${ref} not included: it is outside the project (${root})`);
      continue;
    }
    const max = options.maxFileBytes ?? 256 * 1024;
    const content = fs.readFileSync(real);
    const shown =
      content.length > max
        ? `${content.subarray(0, max).toString("utf8")}\n[cut at ${max} bytes]`
        : content.toString("utf8");
    included.push(`<file path="${rel}">\n${shown.trimEnd()}\n</file>`);
  }

  // 3. Arguments last.
  const positional = positionalArgs(args);
  const trimmed = args.trim();
  let used = false;
  text = text.replace(/\$ARGUMENTS\b|\$([1-9])(?![0-9])/g, (whole, n: string | undefined) => {
    used = true;
    return n === undefined ? trimmed : (positional[Number(n) - 1] ?? "");
  });
  // No placeholder: the arguments follow the text, as Claude Code appends them.
  if (!used && trimmed) text = `${text.trimEnd()}\n\nARGUMENTS: ${trimmed}`;
  if (included.length > 0) text = `${text.trimEnd()}\n\n${included.join("\n\n")}`;
  return { text: text.trim(), warnings };
}
