// What warren read of a person's setup, and what it skipped (SPEC §9 "What was read, and what was
// not"): one source per kind of file (instructions, agent files, MCP servers, hooks, …), each with
// the files read and its warnings, drawn by the TUI's first screen (ui/views/welcome.ts) and by
// `warren doctor` alike, so the two never disagree. A new kind of file is one provider in
// PROVIDERS below; the config's own `warnings` (agent files, hooks, MCP entries not used) are
// shown beside these by both, so a provider lists only warnings of its own.
import os from "node:os";
import path from "node:path";
import type { Config } from "../config/config.js";
import { allowedOnly } from "../mcp/allow.js";
import { projectMcpWaiting } from "../mcp/project.js";
import { settingsLines, settingsWaitingLine } from "../config/claude-settings.js";
import { heldLine, skillsAndCommands } from "../skills/listing.js";
import { instructionsFor } from "./instructions.js";

type Env = Record<string, string | undefined>;

export interface SetupSource {
  /** A short word or two: "instructions", "agent files", "mcp", "hooks", "skills", … */
  label: string;
  /** The label on the first screen, at most 10 characters (default: `label`). */
  short?: string;
  /** What was read, as shown (home as ~); empty: nothing of this kind was found. */
  files: string[];
  /** A few words after the files ("3 servers · /mcp lists their tools"). */
  note?: string;
  /** One line each: what was skipped or waits, and why. */
  warnings: string[];
  /** Shown even when nothing was found (instructions: "none found" is worth saying). */
  always?: boolean;
}

export interface SourceContext {
  config: Config;
  /** The agent's working directory. */
  cwd: string;
  env: Env;
  /** A path as shown to people: the home directory as ~. */
  shown: (file: string) => string;
  /** How the person allows a waiting `.mcp.json` where the sources are shown. */
  allowHow: string;
  /** How the person trusts a project's settings files there (`warren trust`, `/trust`). */
  trustHow: string;
  /** The built-in slash commands' names, which command files cannot take. */
  builtins: ReadonlySet<string>;
}

export type SourceProvider = (ctx: SourceContext) => SetupSource | SetupSource[] | undefined;

function instructionsSource({ cwd, env, shown }: SourceContext): SetupSource {
  const { files, changes, warnings } = instructionsFor(cwd, env);
  const changed = changes.map(
    (c) =>
      `${shown(c.file)} changed since you accepted it: used as you accepted it until you accept the change`,
  );
  return {
    label: "instructions",
    short: "reads",
    files: files.map((f) => (f.importedBy ? `${shown(f.path)} (imported)` : shown(f.path))),
    ...(files.length === 0 ? { note: "no AGENTS.md or CLAUDE.md found" } : {}),
    warnings: [...warnings, ...changed],
    always: true,
  };
}

function agentFilesSource({ config, shown }: SourceContext): SetupSource {
  const files = [...new Set(Object.values(config.agentFiles ?? {}))].sort();
  return { label: "agent files", short: "profiles", files: files.map(shown), warnings: [] };
}

function mcpSource({ config, shown, allowHow }: SourceContext): SetupSource {
  // Those that may start (a waiting .mcp.json's are its warning's).
  const n = Object.keys(allowedOnly(config.mcpServers ?? {})).length;
  const files = [
    ...(config.configPath && Object.keys(config.mcpServers ?? {}).length
      ? [config.configPath]
      : []),
    ...(config.mcpFiles ?? []),
    ...(config.projectMcp ? [config.projectMcp.file] : []),
  ];
  const waiting = projectMcpWaiting(config.projectMcp, allowHow);
  return {
    label: "mcp",
    files: [...new Set(files)].map(shown),
    ...(n > 0
      ? { note: `${n} server${n === 1 ? "" : "s"} · /mcp lists them and their tools` }
      : {}),
    warnings: waiting ? [waiting] : [],
  };
}

function hooksSource({ config, shown }: SourceContext): SetupSource {
  const hooks = config.hooks ?? {};
  const count = Object.values(hooks).reduce(
    (sum, groups) => sum + (groups ?? []).reduce((s, g) => s + g.hooks.length, 0),
    0,
  );
  const events = Object.keys(hooks).filter((e) => (hooks[e as keyof typeof hooks] ?? []).length);
  return {
    label: "hooks",
    files: count > 0 && config.configPath ? [shown(config.configPath)] : [],
    ...(count > 0 ? { note: `${count} hook${count === 1 ? "" : "s"} (${events.join(", ")})` } : {}),
    warnings: [],
  };
}

/** Claude Code's settings files: each read, waiting for trust (its deny and ask apply), or broken. */
function settingsSource({ config, shown, trustHow }: SourceContext): SetupSource {
  const settings = config.claudeSettings;
  const waiting = settingsWaitingLine(settings, trustHow);
  // settingsLines' text starts with the file's path; shown with the home as ~.
  const files = settingsLines(settings).map((line, i) => {
    const file = settings?.files[i]?.file;
    return file && line.startsWith(file) ? shown(file) + line.slice(file.length) : line;
  });
  return { label: "settings", files, warnings: waiting ? [waiting] : [] };
}

/**
 * Skills (offered to the model by name) and the person's command files (`/name ARGS`); a project's
 * that wait for trust are one line each kind.
 */
function skillSources(ctx: SourceContext): SetupSource[] {
  const { skills, commands } = skillsAndCommands(ctx.cwd, ctx.builtins, ctx.env);
  const held = (line: string | undefined) => (line ? [line] : []);
  return [
    {
      label: "skills",
      files: skills.found,
      warnings: [...skills.warnings, ...held(heldLine(skills.held, "skills", ctx.trustHow))],
    },
    {
      label: "commands",
      files: commands.found,
      warnings: [
        ...commands.warnings,
        ...held(heldLine(commands.held, "command files", ctx.trustHow)),
      ],
    },
  ];
}

/**
 * The kinds of files warren reads, in the order they are shown. Skills, command files and Claude
 * Code's settings plug in here, one provider each (a function of the context to a SetupSource).
 */
export const PROVIDERS: SourceProvider[] = [
  instructionsSource,
  agentFilesSource,
  settingsSource,
  mcpSource,
  hooksSource,
  skillSources,
];

/** Where the sources are shown: how the person answers there, and the commands files cannot take. */
export interface SourcesShownIn {
  allowHow: string;
  trustHow: string;
  builtins: ReadonlySet<string>;
}

/** The command line's wording (`warren doctor`). */
export const ON_THE_COMMAND_LINE: SourcesShownIn = {
  allowHow: "`warren mcp allow`",
  trustHow: "`warren trust`",
  builtins: new Set(),
};

/** Every source with something to show (read files, a note, a warning), in PROVIDERS' order. */
export function setupSources(
  config: Config,
  cwd: string,
  env: Env = process.env,
  where: SourcesShownIn = ON_THE_COMMAND_LINE,
): SetupSource[] {
  const home = env.HOME || os.homedir();
  const shown = (file: string) =>
    home && file.startsWith(home + path.sep) ? `~${file.slice(home.length)}` : file;
  const ctx: SourceContext = { config, cwd, env, shown, ...where };
  const out: SetupSource[] = [];
  for (const provide of PROVIDERS) {
    let provided: SetupSource | SetupSource[] | undefined;
    try {
      provided = provide(ctx);
    } catch (err) {
      // One kind of file that cannot be listed never hides the others.
      provided = {
        label: "setup",
        files: [],
        warnings: [`could not list: ${(err as Error).message}`],
      };
    }
    for (const source of [provided ?? []].flat()) {
      if (source.always || source.files.length || source.note || source.warnings.length) {
        out.push(source);
      }
    }
  }
  return out;
}

/** A source's files and note as one line of text (wrapped where it is drawn, never cut). */
export function sourceText(source: SetupSource): string {
  return [source.files.join(", "), source.note].filter(Boolean).join(" · ");
}
