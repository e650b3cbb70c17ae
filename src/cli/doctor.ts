// `warren doctor`: one line each for the database, the sandbox and the model server, so a person
// sees at once what warren will use and what is missing, then what of their setup an agent
// started here reads (runtime/setup-sources.ts: instruction files, agent files, MCP servers,
// hooks, skills, commands, Claude Code's settings), one line each, and every warning about it
// (what was skipped, and why). Exit 1 when the database or the model server does not answer (an unavailable sandbox under "auto" is said, not failed).
import { loadConfig } from "../config/config.js";
import { BUILTIN_NAMES } from "../ui/commands/table.js";
import { ON_THE_COMMAND_LINE, setupSources, sourceText } from "../runtime/setup-sources.js";
import { parseCommandLine, JSON_OPTION, type RunCommand } from "./command.js";
import {
  databaseHealth,
  modelServerHealth,
  sandboxHealth,
  type HealthLine,
} from "../runtime/health.js";

export const runDoctor: RunCommand = async (args, io) => {
  const { values } = parseCommandLine("doctor", [], args, JSON_OPTION);
  const config = loadConfig(io.env);
  const lines: HealthLine[] = await Promise.all([
    databaseHealth(io.env),
    sandboxHealth(config.sandbox),
    modelServerHealth(config.model),
  ]);
  const warnings: string[] = [];
  for (const source of setupSources(config, process.cwd(), io.env, {
    ...ON_THE_COMMAND_LINE,
    builtins: BUILTIN_NAMES,
  })) {
    lines.push({ label: source.label, ok: true, text: sourceText(source) });
    warnings.push(...source.warnings);
  }
  warnings.push(...(config.warnings ?? []));
  if (values.json) {
    const report = Object.fromEntries(lines.map((l) => [key(l), l]));
    io.out(JSON.stringify(warnings.length ? { ...report, warnings } : report));
  } else {
    for (const line of lines) {
      const mark = line.ok ? io.color.green("ok ") : io.color.yellow("!! ");
      io.out(`${mark} ${line.label.padEnd(13)} ${line.text}`);
    }
    for (const warning of warnings) io.out(`${io.color.yellow("!! ")} ${warning}`);
  }
  const failed = lines.some(
    (l) => !l.ok && (l.label !== "sandbox" || config.sandbox.mode === "on"),
  );
  return failed ? 1 : 0;
};

function key(line: HealthLine): string {
  return line.label.replace(/ /g, "_");
}
