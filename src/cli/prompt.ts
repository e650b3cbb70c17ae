// `warren -p PROMPT`: a new tree whose root starts on PROMPT; prints the root's last answer once
// the whole tree has settled (with --output-schema: the answer as one JSON value). Exit 0 ok,
// 1 model/runtime error (or an answer that never matched the schema), 2 bad usage, 124 timeout.
import fs from "node:fs";
import { acceptFilesAtStart } from "../runtime/file-changes.js";
import { loadConfig, modelProblem } from "../config/config.js";
import { unlistedModelHint } from "../llm/model-list.js";
import { projectMcpWaiting } from "../mcp/project.js";
import { settingsWaitingLine } from "../config/claude-settings.js";
import { outageFilter, wordWarning } from "../db/warning.js";
import { escapeControl } from "../text/escape.js";
import { CliError, type Io } from "./command.js";
import { compileOutputSchema } from "../text/json-schema.js";
import { firstLine, jsonText } from "../text/format.js";
import { runPrompt, type PromptRun } from "../runtime/headless.js";
import { sandboxStartNotice } from "../sandbox/launch.js";
import { withDatabase } from "./scope.js";
import type { ApproveMode } from "../policy/policy.js";
import {
  findPersonCommand,
  heldLine,
  heldSkillsAndCommands,
  personCommands,
} from "../skills/listing.js";
import { commandShell } from "../runtime/command-shell.js";
import type { Config } from "../config/config.js";

export const EXIT_TIMEOUT = 124;
const EXIT_INTERRUPTED = 130;

/** How long past --timeout the runtime gets to report its own timeout before we stop waiting. */
const TIMEOUT_GRACE_MS = 10_000;

export interface HeadlessOptions {
  prompt: string;
  json: boolean;
  timeoutSeconds: number | undefined;
  approve?: ApproveMode;
  /** --output-schema FILE: a JSON Schema the root's final answer must match. */
  outputSchemaFile?: string;
}

export async function runHeadless(options: HeadlessOptions, io: Io): Promise<number> {
  // Before anything else (no model request, no tree): a bad file is the person's to fix.
  const outputSchema =
    options.outputSchemaFile === undefined ? undefined : readOutputSchema(options.outputSchemaFile);
  // The person starts warren here: instruction and agent files never recorded are theirs.
  const unrecorded = acceptFilesAtStart(process.cwd(), io.env);
  if (unrecorded) io.err(`warren: ${unrecorded}`);
  const config = loadConfig(io.env);
  // Agent files that could not be used: one line each, the run goes on without them.
  for (const warning of config.warnings ?? []) io.err(`warren: ${warning}`);
  // A project .mcp.json not allowed yet: one line, and its servers stay off.
  const waiting = projectMcpWaiting(config.projectMcp);
  if (waiting) io.err(`warren: ${escapeControl(waiting)}`);
  // Project settings files whose allow rules, env or hooks wait for `warren trust`: one line.
  const untrusted = settingsWaitingLine(config.claudeSettings);
  if (untrusted) io.err(`warren: ${escapeControl(untrusted)}`);
  // The project's skill and command files waiting for it: one line.
  const held = heldLine(
    heldSkillsAndCommands(process.cwd(), io.env).map((h) => h.file),
    "skill and command files",
  );
  if (held) io.err(`warren: ${escapeControl(held)}`);
  if (config.model.name && !modelProblem(config.model)) {
    const hint = await unlistedModelHint({ ...config.model, model: config.model.name });
    if (hint) io.err(`warren: ${hint}`);
  }
  // One line when bash will run unconfined because `auto` found no working bubblewrap.
  const unconfined = await sandboxStartNotice(config.sandbox);
  if (unconfined) io.err(`warren: ${unconfined}`);
  const timeoutMs =
    options.timeoutSeconds === undefined ? undefined : options.timeoutSeconds * 1000;
  const interrupt = new AbortController();
  const onSigint = () => {
    // The first Ctrl+C stops the run (and its tree) cleanly; a second one leaves at once.
    if (interrupt.signal.aborted) process.exit(EXIT_INTERRUPTED);
    io.err("warren: interrupted; stopping (Ctrl+C again to force)");
    interrupt.abort();
  };
  process.on("SIGINT", onSigint);
  const result = await withDatabase(io.env, async (db, url) => {
    // `/review security`: a command file's (or a skill's) text is the prompt. Expanded once the
    // database answers: its !`cmd` (the shell parser, a sandbox) never races the connection.
    const prompt = await expandPrompt(options.prompt, config, options.approve, io);
    return withDeadline(
      runPrompt({
        db,
        url,
        config,
        prompt,
        approve: options.approve,
        timeoutMs,
        signal: interrupt.signal,
        ...(outputSchema ? { outputSchema } : {}),
        onWarning: outageFilter((warning) => io.err(`warren: ${wordWarning(warning)}`)),
      }),
      timeoutMs,
    );
  }).finally(() => process.off("SIGINT", onSigint));
  if (interrupt.signal.aborted) return EXIT_INTERRUPTED;
  const timedOutMessage = `timed out after ${options.timeoutSeconds} s`;
  if (result === "deadline") {
    io.err(`warren: ${timedOutMessage} (the runtime did not stop in time)`);
    return EXIT_TIMEOUT;
  }
  const mismatch =
    result.result && !result.result.ok
      ? `the answer does not match --output-schema: ${result.result.error}`
      : undefined;
  const error = result.error ?? (result.timedOut ? timedOutMessage : mismatch);
  const value = result.result?.ok ? { result: result.result.value } : undefined;
  if (options.json) {
    io.out(
      jsonText({
        tree_id: result.treeId,
        agent_id: result.agentId,
        text: result.text,
        tool_calls: result.toolCalls,
        input_tokens: result.inputTokens,
        output_tokens: result.outputTokens,
        cached_tokens: result.cachedTokens,
        reasoning_tokens: result.reasoningTokens,
        cost_usd: result.costUsd,
        ...(value ?? {}),
        ...(error === undefined ? {} : { error }),
        ...(result.failedAgents
          ? {
              failed_agents: result.failedAgents.map((f) => ({
                agent_id: f.agentId,
                name: f.name,
                error: f.error,
              })),
            }
          : {}),
      }),
    );
  } else if (outputSchema) {
    // stdout is the value alone, one line, or nothing at all.
    if (value && error === undefined) io.out(jsonText(value.result));
  } else if (result.text) {
    io.out(escapeControl(result.text, { multiline: true }));
  }
  // One line per agent of the tree whose last turn failed, named, with the server's message.
  for (const failed of result.failedAgents ?? []) {
    const who = `${failed.name} ${failed.agentId.slice(0, 8)}`;
    io.err(`warren: agent ${escapeControl(who)} failed: ${escapeControl(firstLine(failed.error))}`);
  }
  if (result.timedOut) {
    io.err(`warren: ${timedOutMessage}`);
    return EXIT_TIMEOUT;
  }
  if (error !== undefined) {
    io.err(`warren: ${firstLine(error)}`);
    return 1;
  }
  return 0;
}

/** The runtime enforces the timeout; this only guards against it never returning. */
async function withDeadline(
  work: Promise<PromptRun>,
  timeoutMs: number | undefined,
): Promise<PromptRun | "deadline"> {
  if (timeoutMs === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"deadline">((resolve) => {
    timer = setTimeout(() => resolve("deadline"), timeoutMs + TIMEOUT_GRACE_MS);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The prompt to run: `/name ARGS` naming one of the person's commands (command files, skills) is
 * expanded (its `` !`cmd` `` through the policy, as the root's bash would be); anything else is
 * sent as written. Each warning is one stderr line.
 */
async function expandPrompt(
  text: string,
  config: Config,
  approve: ApproveMode | undefined,
  io: Io,
): Promise<string> {
  if (!/^\/[^/\s]/.test(text.trimStart())) return text;
  const cwd = process.cwd();
  // The TUI's names (no command file may take one): loaded only for a prompt that is a command.
  const { BUILTIN_NAMES } = await import("../ui/commands/table.js");
  const found = findPersonCommand(personCommands(cwd, BUILTIN_NAMES, io.env).commands, text);
  if (!found) return text;
  const warn = (line: string) => io.err(`warren: /${found.command.name}: ${escapeControl(line)}`);
  const shell = commandShell({ config, cwd, ...(approve ? { approve } : {}), onWarning: warn });
  const expanded = await found.command.expand(found.args, { cwd, shell });
  for (const warning of expanded.warnings) warn(warning);
  return expanded.text;
}

/** --output-schema FILE: its JSON Schema, checked with ajv; else a one-line error (exit 2). */
function readOutputSchema(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw new CliError(`--output-schema ${file}: cannot read: ${code}`, 2);
  }
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (err) {
    throw new CliError(`--output-schema ${file}: not JSON: ${(err as Error).message}`, 2);
  }
  const compiled = compileOutputSchema(schema);
  if (!compiled.ok) throw new CliError(`--output-schema ${file}: ${compiled.error}`, 2);
  if (typeof schema !== "object" || schema === null) {
    throw new CliError(`--output-schema ${file}: a JSON Schema must be an object`, 2);
  }
  return schema as Record<string, unknown>;
}
