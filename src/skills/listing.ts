// The person's own commands (command files and skills, both run as `/name ARGS`) in one list, and
// what was read for the first screen and `warren doctor`: every skill and command found, and
// every warning (a bad front matter, a shadowed name), never skipped in silence.
import {
  commandUsage,
  expandCommand,
  loadCommandFiles,
  type CommandFile,
  type ExpandOptions,
} from "./command-files.js";
import { rulesCover } from "../policy/policy.js";
import { skillBody, skillsFor, type Skill } from "./skills.js";
import { shownPath, type HeldFile } from "./sources.js";

type Env = Record<string, string | undefined>;

export interface PersonCommand {
  name: string;
  /** `/review [area]`. */
  usage: string;
  /** One line for /help. */
  help: string;
  kind: "command" | "skill";
  file: string;
  /** The message this command sends for `args` (as typed after its name). */
  expand(args: string, options: ExpandOptions): Promise<{ text: string; warnings: string[] }>;
}

export interface PersonCommands {
  commands: PersonCommand[];
  warnings: string[];
}

/** What a person's `/name ARGS` ran: a skill, or a command file declaring `allowed-tools`. */
export interface RunIn {
  kind: "skill" | "command";
  name: string;
}

/**
 * The first line of the message a person's `/name` sends when what it runs narrows the turn
 * (runIn reads it back: its allowed-tools hold for that turn).
 */
function runHead(ran: RunIn, where: string): string {
  return `Use the ${ran.kind} "${ran.name}" (${shownPath(where, {})}):`;
}

/** A skill run by the person: its instructions, then what they typed, under runHead. */
function skillMessage(skill: Skill, args: string): string {
  const body = skillBody(skill);
  const head = runHead({ kind: "skill", name: skill.name }, skill.dir);
  return [head, "", body, ...(args.trim() ? ["", `ARGUMENTS: ${args.trim()}`] : [])].join("\n");
}

/**
 * A command file's expanded text; under runHead where it declares `allowed-tools` (a command
 * without them sends its text alone, as it always did). Its list narrows its own `` !`cmd` ``
 * too: one it does not cover is not run (what it covers still goes through the caller's policy).
 */
async function commandMessage(
  command: CommandFile,
  args: string,
  options: ExpandOptions,
): Promise<{ text: string; warnings: string[] }> {
  const { allowedTools, allowedRules } = command;
  if (!allowedTools || !allowedRules) return expandCommand(command.body, args, options);
  const refused: string[] = [];
  const shell = options.shell;
  const listed = shell && {
    shell: async (line: string) => {
      if (await rulesCover(allowedRules, "bash", { command: line }, options.cwd))
        return shell(line);
      const why = `its allowed-tools (${allowedTools.join(", ") || "nothing"}) do not include it`;
      refused.push(`!\`${line}\` not run: ${why}`);
      return `[not run: \`${line}\` — ${why}]`;
    },
  };
  const expanded = await expandCommand(command.body, args, { ...options, ...listed });
  const warnings = [...refused, ...expanded.warnings];
  if (!expanded.text.trim()) return { ...expanded, warnings };
  const head = runHead({ kind: "command", name: command.name }, command.file);
  return { text: `${head}\n\n${expanded.text}`, warnings };
}

/**
 * The person's commands for `cwd`: command files first, then skills not named by one. No name in
 * `builtins` is taken (one warning each).
 */
export function personCommands(
  cwd: string,
  builtins: ReadonlySet<string>,
  env: Env = process.env,
): PersonCommands {
  const files = loadCommandFiles(cwd, env, builtins);
  const skills = skillsFor(cwd, env);
  const warnings = [...files.warnings];
  const commands: PersonCommand[] = files.commands.map((c) => ({
    name: c.name,
    usage: commandUsage(c.name, c.argumentHint),
    help: c.description ?? `the prompt in ${shownPath(c.file, env)}`,
    kind: "command",
    file: c.file,
    expand: (args, options) => commandMessage(c, args, options),
  }));
  const taken = new Set(commands.map((c) => c.name.toLowerCase()));
  for (const skill of skills.skills) {
    const key = skill.name.toLowerCase();
    if (builtins.has(key)) {
      warnings.push(
        `skill "${skill.name}": /${skill.name} is warren's own command; run it by the model only`,
      );
      continue;
    }
    if (taken.has(key)) {
      warnings.push(
        `skill "${skill.name}": /${skill.name} is a command file's; the skill is not a /command`,
      );
      continue;
    }
    taken.add(key);
    commands.push({
      name: skill.name,
      usage: commandUsage(skill.name, "[ARGS]"),
      help: `skill: ${skill.description}`,
      kind: "skill",
      file: skill.file,
      expand: (args) => Promise.resolve({ text: skillMessage(skill, args), warnings: [] }),
    });
  }
  return { commands, warnings };
}

/**
 * The skill or command file a person's message runs (its first line is runHead's), or undefined.
 * Anyone who types that first line gets its narrowing, never more: it only ever takes tools away.
 */
export function runIn(text: string): RunIn | undefined {
  const match = /^Use the (skill|command) "([A-Za-z0-9][A-Za-z0-9._:-]*)" \(/.exec(text);
  return match ? { kind: match[1] as RunIn["kind"], name: match[2]! } : undefined;
}

/** The person command `text` (`/name ARGS`) names, with its arguments; undefined for none. */
export function findPersonCommand(
  commands: readonly PersonCommand[],
  text: string,
): { command: PersonCommand; args: string } | undefined {
  const match = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  const name = match[1]!.toLowerCase();
  const command = commands.find((c) => c.name.toLowerCase() === name);
  return command ? { command, args: match[2] ?? "" } : undefined;
}

export interface Listing {
  found: string[];
  warnings: string[];
  /** The project's files waiting for the person's trust, as shown. */
  held: string[];
}

/**
 * What was read, for the first screen and `warren doctor`: the skills (marked when hidden from
 * the model) and the command files, each with its file, and every warning.
 */
export function skillsAndCommands(
  cwd: string,
  builtins: ReadonlySet<string>,
  env: Env = process.env,
): { skills: Listing; commands: Listing } {
  const skills = skillsFor(cwd, env);
  const files = loadCommandFiles(cwd, env, builtins);
  return {
    skills: {
      found: skills.skills.map(
        (s) =>
          `${s.name} (${shownPath(s.file, env)})${s.modelInvocable ? "" : " — person only (disable-model-invocation)"}`,
      ),
      warnings: skills.warnings,
      held: skills.held.map((h) => shownPath(h.file, env)),
    },
    commands: {
      found: files.commands.map((c) => `/${c.name} (${shownPath(c.file, env)})`),
      warnings: files.warnings,
      held: files.held.map((h) => shownPath(h.file, env)),
    },
  };
}

/** The project's skill and command files that wait for the person's trust (`warren trust`). */
export function heldSkillsAndCommands(cwd: string, env: Env = process.env): HeldFile[] {
  return [...skillsFor(cwd, env).held, ...loadCommandFiles(cwd, env).held];
}

/**
 * The project's skill and command files for `cwd`, each with whether it is used now (trusted as
 * it is) or waits for trust: what a trust decision can change for a running TUI (ui/trust-sync.ts).
 */
export function projectSkillAndCommandFiles(
  cwd: string,
  env: Env = process.env,
): { file: string; trusted: boolean }[] {
  const skills = skillsFor(cwd, env);
  const commands = loadCommandFiles(cwd, env);
  const used = [...skills.skills, ...commands.commands].filter((f) => f.source.scope === "project");
  return [
    ...used.map((f) => ({ file: f.file, trusted: true })),
    ...[...skills.held, ...commands.held].map((h) => ({ file: h.file, trusted: false })),
  ];
}

/**
 * One line naming the project's skill and command files that wait for trust (`how`: how to trust
 * where the line is shown); undefined when none waits.
 */
export function heldLine(
  held: readonly string[],
  what: string,
  how = "`warren trust`",
): string | undefined {
  if (held.length === 0) return undefined;
  return `waiting for ${how}: ${held.join(", ")} (the project's ${what} are not used until you trust them)`;
}

/** Two lines (skills, commands) for `warren doctor` and the first screen. */
export function skillsAndCommandsLines(
  cwd: string,
  builtins: ReadonlySet<string>,
  env: Env = process.env,
): string[] {
  const { skills, commands } = skillsAndCommands(cwd, builtins, env);
  const names = (found: string[]) => found.map((f) => f.split(" (")[0]).join(", ");
  return [
    skills.found.length
      ? `skills: ${skills.found.length} (${names(skills.found)})`
      : "skills: none found",
    commands.found.length
      ? `commands: ${commands.found.length} (${names(commands.found)})`
      : "commands: none found",
    ...[
      ...skills.warnings,
      ...commands.warnings,
      heldLine(skills.held, "skills"),
      heldLine(commands.held, "command files"),
    ]
      .filter(Boolean)
      .map((w) => `  warning: ${w}`),
  ];
}
