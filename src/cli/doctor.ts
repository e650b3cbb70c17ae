// `warren doctor`: one line each for the database, the sandbox and the model server, so a person
// sees at once what warren will use and what is missing, and one naming the instruction files
// (AGENTS.md, CLAUDE.md) an agent started here reads. Exit 1 when the database or the model
// server does not answer (an unavailable sandbox under "auto" is said, not failed).
import { loadConfig, type Config } from "../config/config.js";
import { settingsLines } from "../config/claude-settings.js";
import { instructionFilesLine } from "../runtime/instructions.js";
import { parseCommand, JSON_OPTION, expectPositionals, type RunCommand } from "./command.js";
import {
  databaseHealth,
  modelServerHealth,
  sandboxHealth,
  type HealthLine,
} from "../runtime/health.js";

export const runDoctor: RunCommand = async (args, io) => {
  const { values, positionals } = parseCommand("doctor", args, JSON_OPTION);
  expectPositionals(positionals, "doctor", { required: [] });
  const config = loadConfig(io.env);
  const lines: HealthLine[] = await Promise.all([
    databaseHealth(io.env),
    sandboxHealth(config.sandbox),
    modelServerHealth(config.model),
  ]);
  const instructions = instructionFilesLine(process.cwd(), io.env);
  lines.push({
    label: "instructions",
    ok: true,
    text: instructions.replace(/^instructions: /, ""),
  });
  const settings = settingsHealth(config);
  if (values.json) {
    const entries: [string, unknown][] = lines.map((l) => [key(l), l]);
    if (settings.length > 0) entries.push(["settings", settings]);
    io.out(JSON.stringify(Object.fromEntries(entries)));
  } else {
    for (const line of [...lines, ...settings]) {
      const mark = line.ok ? io.color.green("ok ") : io.color.yellow("!! ");
      io.out(`${mark} ${line.label.padEnd(13)} ${line.text}`);
    }
  }
  const failed = lines.some(
    (l) => !l.ok && (l.label !== "sandbox" || config.sandbox.mode === "on"),
  );
  return failed ? 1 : 0;
};

/**
 * Claude Code's settings files: one line each (read, or waiting for `warren trust`), then each
 * rule or entry that could not be applied. Shown with "!!", never a failure of doctor.
 */
function settingsHealth(config: Config): HealthLine[] {
  const files = config.claudeSettings?.files ?? [];
  const warnings = config.claudeSettings?.warnings ?? [];
  return [
    ...settingsLines(config.claudeSettings).map((text, i) => ({
      label: "settings" as const,
      ok: files[i]?.state === "read",
      text,
    })),
    ...warnings.map((text) => ({ label: "settings" as const, ok: false, text })),
  ];
}

function key(line: HealthLine): string {
  return line.label.replace(" ", "_");
}
