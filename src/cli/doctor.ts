// `warren doctor`: one line each for the database, the sandbox and the model server, so a person
// sees at once what warren will use and what is missing, and one naming the instruction files
// (AGENTS.md, CLAUDE.md) an agent started here reads. Exit 1 when the database or the model
// server does not answer (an unavailable sandbox under "auto" is said, not failed).
import { loadConfig } from "../config/config.js";
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
  if (values.json) {
    io.out(JSON.stringify(Object.fromEntries(lines.map((l) => [key(l), l]))));
  } else {
    for (const line of lines) {
      const mark = line.ok ? io.color.green("ok ") : io.color.yellow("!! ");
      io.out(`${mark} ${line.label.padEnd(13)} ${line.text}`);
    }
  }
  const failed = lines.some(
    (l) => !l.ok && (l.label !== "sandbox" || config.sandbox.mode === "on"),
  );
  return failed ? 1 : 0;
};

function key(line: HealthLine): string {
  return line.label.replace(" ", "_");
}
