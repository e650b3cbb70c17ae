// `warren trust [DIR]`: the person trusts a project folder's own files as they are now (SPEC §9):
// `.claude/settings.json` / `settings.local.json` (their allow rules, env, hooks), its skill and
// command files, and `.mcp.json` (its servers, as `warren mcp allow`). Shown first, then remembered by path and content
// (config/trust.ts); a file changed since waits again. `--list` names what is trusted, `--revoke`
// forgets a folder's files.
import fs from "node:fs";
import path from "node:path";
import { loadClaudeSettings, type ClaudeSettings } from "../config/claude-settings.js";
import { revokeTrust, trustedEntries, trustFiles, trustGate } from "../config/trust.js";
import { rememberAllow } from "../mcp/allow.js";
import { allowLines, findProjectMcpFile, parseProjectMcp } from "../mcp/project.js";
import { HOOK_EVENTS } from "../hooks/config.js";
import { heldSkillsAndCommands } from "../skills/listing.js";
import { escapeControl } from "../text/escape.js";
import { errorMessage } from "../tools/tool.js";
import {
  CliError,
  expectPositionals,
  parseCommandArgs,
  type Io,
  type RunCommand,
} from "./command.js";

export const runTrust: RunCommand = async (args, io) => {
  const { values, positionals } = parseCommandArgs("trust", {
    args,
    allowPositionals: true,
    options: {
      list: { type: "boolean", default: false },
      revoke: { type: "boolean", default: false },
    },
  });
  if (values.list && values.revoke) throw new CliError("--list and --revoke go alone");
  if (values.list) {
    expectPositionals(positionals, "trust", { required: [] });
    return list(io);
  }
  expectPositionals(positionals, "trust", { required: [], optional: ["DIR"] });
  const dir = path.resolve(positionals[0] ?? process.cwd());
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new CliError(`${dir} is not a directory`);
  }
  if (values.revoke) return revoke(dir, io);
  return trust(dir, io);
};

function trust(dir: string, io: Io): number {
  const settings = loadClaudeSettings(dir, io.env);
  const files = settings.files.filter((f) => f.scope === "project" && f.state !== "broken");
  for (const warning of settings.warnings) io.err(`warren: ${escapeControl(warning)}`);
  const mcpFile = findProjectMcpFile(dir);
  let trusted = 0;
  for (const f of files) {
    // What is shown is what is trusted: a file changed since it was read is not trusted.
    const content = readOrFail(f.file);
    const gate = trustGate(f.file, content, io.env);
    if (gate.key !== f.gate?.key) throw new CliError(`${f.file} changed while read; run again`);
    io.out(`trusting ${escapeControl(f.file)}:`);
    for (const line of describe(content, f.file, settings)) io.out(`  ${escapeControl(line)}`);
    trustFiles([gate]);
    trusted++;
  }
  // The project's skill and command files as read now: each is what a model or a /command would use.
  for (const held of heldSkillsAndCommands(dir, io.env)) {
    io.out(`trusting ${escapeControl(held.file)}: ${skillOrCommand(held.file)}`);
    trustFiles([held.gate]);
    trusted++;
  }
  if (mcpFile) {
    const content = readOrFail(mcpFile);
    const project = parseProjectMcp(mcpFile, content, io.env);
    for (const warning of project.warnings) io.err(`warren: ${escapeControl(warning)}`);
    if (Object.keys(project.servers).length > 0) {
      io.out(`trusting ${escapeControl(project.file)}: these MCP servers may start`);
      for (const line of allowLines(project)) io.out(line);
      rememberAllow(project.allow);
      trusted++;
    }
  }
  if (trusted === 0) {
    throw new CliError(
      `nothing to trust in ${dir}: no .claude/settings.json, .claude/settings.local.json, skill, command file or .mcp.json waiting (looked up to the repository root)`,
    );
  }
  io.out(
    "trusted; warren applies them from now, a running TUI within a second (a file changed since waits again)",
  );
  return 0;
}

/** What trusting a settings file turns on: its allow rules, env names, hook commands. */
function describe(content: string, file: string, settings: ClaudeSettings): string[] {
  const lines: string[] = [];
  const data = JSON.parse(content) as Record<string, unknown>;
  const rules = [...settings.rules, ...settings.waitingRules].filter((r) =>
    r.source.startsWith(`${file} `),
  );
  for (const r of rules) lines.push(`${r.verdict.padEnd(5)} ${r.text}`);
  const env = data.env && typeof data.env === "object" ? Object.keys(data.env) : [];
  if (env.length > 0) lines.push(`env   ${env.join(", ")} (bash's environment)`);
  const hooks = (data.hooks ?? {}) as Record<string, unknown>;
  for (const event of HOOK_EVENTS) {
    const groups = hooks[event];
    if (!Array.isArray(groups)) continue;
    for (const g of groups as { matcher?: string; hooks?: { command?: string }[] }[]) {
      for (const h of g.hooks ?? []) {
        lines.push(`hook  ${event}${g.matcher ? ` (${g.matcher})` : ""}: ${h.command ?? ""}`);
      }
    }
  }
  if (lines.length === 0) lines.push("(nothing in it waits for trust)");
  return lines;
}

/** How a held file is described: a skill's SKILL.md, or a command file. */
function skillOrCommand(file: string): string {
  return path.basename(file) === "SKILL.md"
    ? `the skill ${path.basename(path.dirname(file))} (offered to the model)`
    : `the command /${path.basename(file, ".md")} (its text, and any !\`cmd\` in it through the policy)`;
}

function readOrFail(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${errorMessage(err)}`);
  }
}

function list(io: Io): number {
  const entries = trustedEntries(io.env);
  if (entries.length === 0) {
    io.out("nothing trusted yet (`warren trust` in a project folder trusts its files)");
    return 0;
  }
  for (const e of entries) {
    io.out(`${escapeControl(e.file)}  ${e.kind === "mcp" ? "mcp servers" : "settings"}  ${e.at}`);
  }
  return 0;
}

function revoke(dir: string, io: Io): number {
  const gone = revokeTrust(dir, io.env);
  if (gone.length === 0) {
    io.out(`nothing trusted under ${dir}`);
    return 0;
  }
  for (const file of gone) io.out(`no longer trusted: ${escapeControl(file)}`);
  io.out("a running TUI stops using them within a second");
  return 0;
}
