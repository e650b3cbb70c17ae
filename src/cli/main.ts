// The command line: parses the top level, dispatches subcommands, and turns failures into exit
// codes (0 ok, 1 runtime error, 2 bad usage, 124 timeout) with one line on stderr. Commands, the
// TUI and -p are loaded when they run: help and --version load nothing of the database or screen.
import { isAgentError } from "../agents/errors.js";
import { ConfigError } from "../config/config.js";
import { warrenPackage } from "../package-root.js";
import { parseApproveMode, type ApproveMode } from "../policy/policy.js";
import { describeDbError, isTransient } from "../db/retry.js";
import { DatabaseUnavailableError } from "../db/unavailable.js";
import { describeOutage } from "../db/warning.js";
import { escapeControl } from "../text/escape.js";
import { colorEnabled, createColors, firstLine } from "../text/format.js";
import {
  CliError,
  parseCommandArgs,
  parseSeconds,
  UsageError,
  type Env,
  type Io,
} from "./command.js";
import { COMMANDS } from "./commands.js";

const COMMAND_WIDTH = Math.max(...COMMANDS.map((c) => c.name.length));

const TOP_USAGE = `Usage:
  warren [--new | --tree ID] [--approve MODE]    open a tree (the most recent by default)
  warren -p PROMPT [--json] [--timeout SECONDS] [--approve MODE] [--output-schema FILE]
                                                 run PROMPT headless in a new tree
  warren COMMAND [ARGS] [--help]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(COMMAND_WIDTH)} ${c.summary}`).join("\n")}
  ${"help".padEnd(COMMAND_WIDTH)} show help for a command

Options:
  --new              start a new tree (a fresh root agent)
  --tree ID          open the tree with this root id or unique id prefix (4+ characters)
  -p, --prompt TEXT  headless: TEXT is the root's first message; prints its last answer
  --json             with -p: print one JSON object {tree_id, agent_id, text, tool_calls,
                     input_tokens, output_tokens, cached_tokens, reasoning_tokens,
                     cost_usd} (cost_usd: the whole tree's, null without prices; with
                     --output-schema also "result", the answer's parsed value)
  --timeout SECONDS  with -p: give up after SECONDS (exit 124)
  --output-schema FILE
                     with -p: FILE is a JSON Schema the root's final answer must match: the
                     root is told it; an answer that does not match (or is not JSON) is sent
                     back once with the errors; stdout is then the JSON value alone (--json:
                     its "result"); still no match: exit 1, the errors on stderr
  --approve MODE     how tool calls the policy marks "ask" are answered in this tree: ask (a
                     person, in any TUI or with warren approve/deny; the TUI's default), all
                     (allowed), none (denied; -p's default; also ask-fail)
  -h, --help         show this help
  --version          print the version

In the TUI: Enter sends, Shift+Enter or Ctrl+J a new line, Ctrl+Up/Down parent/newest child,
  Ctrl+Left/Right siblings, Ctrl+T agent panel, Ctrl+F search, Ctrl+N next agent needing you,
  Esc interrupts, Ctrl+C twice quits, /help for more.

Environment:
  DATABASE_URL       PostgreSQL to use (default: an embedded server under $WARREN_HOME)
  WARREN_HOME        embedded database home (default: $XDG_DATA_HOME/warren)
  OPENAI_API_KEY, OPENAI_BASE_URL, WARREN_MODEL   the model (any OpenAI-compatible server)
  NO_COLOR           disable colors; WARREN_DEBUG=1 shows stack traces

Exit status: 0 ok, 1 error, 2 bad usage, 124 timeout (-p).`;

export async function main(argv: string[], env: Env = process.env): Promise<void> {
  // Library deprecation notices (pg-listen re-LISTENs concurrently after a reconnect) are for
  // developers, not for people at the terminal: shown with WARREN_DEBUG=1 only.
  if (env.WARREN_DEBUG !== "1") process.noDeprecation = true;
  // `warren … | head` closes stdout early: stop quietly instead of crashing on EPIPE.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    // The terminal hung up under the TUI: SIGHUP follows, and its handler stops everything cleanly.
    if (error.code === "EIO") return;
    if (error.code !== "EPIPE")
      process.stderr.write(`warren: cannot write output: ${error.message}\n`);
    process.exit(error.code === "EPIPE" ? (process.exitCode ?? 0) : 1);
  });
  const io: Io = {
    env,
    out: (text) => void process.stdout.write(`${text}\n`),
    // Error lines may quote agent text (names, messages): never let it drive the terminal.
    err: (text) => void process.stderr.write(`${escapeControl(text, { multiline: true })}\n`),
    color: createColors(colorEnabled(env, process.stdout)),
  };
  const { code, exitWhenDone } = await dispatch(argv, io);
  process.exitCode = code;
  if (exitWhenDone) {
    // Runtime modules may hold pools, threads or timers open: flush our output, then leave.
    await flush();
    process.exit(code);
  }
}

async function dispatch(argv: string[], io: Io): Promise<{ code: number; exitWhenDone: boolean }> {
  const [first, ...rest] = argv;
  const command = COMMANDS.find((c) => c.name === first);
  try {
    if (first === "help") return { code: help(rest, io), exitWhenDone: false };
    if (command) {
      if (wantsHelp(rest)) {
        io.out(command.usage);
        return { code: 0, exitWhenDone: false };
      }
      const run = await command.load();
      return { code: (await run(rest, io)) ?? 0, exitWhenDone: !!command.exitWhenDone };
    }
    // The TUI and -p leave runtime threads and pools behind them: exit once output is flushed.
    return { code: await topLevel(argv, io), exitWhenDone: true };
  } catch (error) {
    return { code: report(error, io), exitWhenDone: !command || !!command.exitWhenDone };
  }
}

/** `warren [--new | --tree ID]`, `warren -p …`, `--help`, `--version`. */
async function topLevel(argv: string[], io: Io): Promise<number> {
  if (wantsHelp(argv)) {
    io.out(TOP_USAGE);
    return 0;
  }
  const { values, positionals } = parseCommandArgs("", {
    args: argv,
    allowPositionals: true,
    options: {
      new: { type: "boolean", default: false },
      tree: { type: "string" },
      prompt: { type: "string", short: "p" },
      json: { type: "boolean", default: false },
      timeout: { type: "string" },
      "output-schema": { type: "string" },
      approve: { type: "string" },
      version: { type: "boolean", default: false },
    },
  });
  let approve: ApproveMode | undefined;
  try {
    approve = values.approve === undefined ? undefined : parseApproveMode(values.approve);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (positionals.length > 0 && values.prompt !== undefined) {
    throw new UsageError(`unexpected argument "${positionals[0]}" (quote the whole PROMPT)`);
  }
  if (positionals.length > 0) {
    const names = COMMANDS.map((c) => c.name).join(", ");
    throw new UsageError(`unknown command "${positionals[0]}"; commands: ${names}, help`);
  }
  if (values.version) {
    io.out(`warren ${version()}`);
    return 0;
  }
  if (values.prompt !== undefined) {
    if (values.new || values.tree !== undefined) {
      throw new UsageError("-p always starts a new tree; drop --new/--tree");
    }
    if (!values.prompt.trim()) throw new UsageError("-p needs a non-empty PROMPT");
    const timeoutSeconds = parseSeconds(values.timeout, "--timeout", "");
    // Loaded only when used: the runtime and the model SDK are most of a start's import time.
    const { runHeadless } = await import("./prompt.js");
    const outputSchemaFile = values["output-schema"];
    return runHeadless(
      { prompt: values.prompt, json: values.json, timeoutSeconds, approve, outputSchemaFile },
      io,
    );
  }
  if (values["output-schema"] !== undefined) throw new UsageError("--output-schema goes with -p");
  if (values.json) throw new UsageError("--json goes with -p (or a command such as ls --json)");
  if (values.timeout !== undefined) throw new UsageError("--timeout goes with -p");
  if (values.new && values.tree !== undefined) {
    throw new UsageError("--new and --tree exclude each other");
  }
  const { runStart } = await import("./start.js"); // blessed and the TUI: only for the TUI
  return runStart({ newTree: values.new, tree: values.tree, approve }, io);
}

function help(args: string[], io: Io): number {
  const name = args[0];
  if (name === undefined) {
    io.out(TOP_USAGE);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw new UsageError(`no command "${name}"`);
  io.out(command.usage);
  return 0;
}

/** -h/--help anywhere before a `--` terminator. */
function wantsHelp(args: string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === "-h" || a === "--help");
}

/** Prints one line for `error` and returns the exit code. */
function report(error: unknown, io: Io): number {
  if (io.env.WARREN_DEBUG === "1" && error instanceof Error && error.stack) io.err(error.stack);
  if (error instanceof UsageError) {
    const where = error.command ? `warren ${error.command} --help` : "warren --help";
    io.err(`warren: ${error.message}`);
    io.err(`Run '${where}' for usage.`);
    return 2;
  }
  if (error instanceof ConfigError) {
    io.err(`warren: ${firstLine(error.message)}`);
    return 2;
  }
  if (error instanceof CliError) {
    io.err(`warren: ${firstLine(error.message)}`);
    return error.exitCode;
  }
  if (error instanceof DatabaseUnavailableError || isAgentError(error)) {
    io.err(`warren: ${firstLine(error.message)}`);
    return 1;
  }
  if (isTransient(error)) {
    io.err(`warren: ${describeOutage(describeDbError(error))}`);
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  // drizzle's "Failed query: <SQL>" is for developers (WARREN_DEBUG=1); people get the reason.
  const shown = message.startsWith("Failed query:")
    ? `database error: ${describeDbError(error)}`
    : firstLine(message);
  io.err(`warren: ${hidePasswords(shown) || "unexpected error"}`);
  return 1;
}

/** scheme://user:password@host → scheme://user@host, in case an error message quotes a URL. */
function hidePasswords(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*):[^@\s]*@/gi, "$1@");
}

function version(): string {
  try {
    return warrenPackage().version;
  } catch {
    return "unknown";
  }
}

function flush(): Promise<void> {
  const drained = (stream: NodeJS.WriteStream) =>
    new Promise<void>((resolve) => stream.write("", () => resolve()));
  return Promise.all([drained(process.stdout), drained(process.stderr)]).then(() => {});
}
