// What every subcommand shares: the Command shape (help and a loader), the output handle, and the
// two failures the command line distinguishes (bad usage → exit 2, a runtime error → exit 1).
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { Colors } from "../text/format.js";

export type Env = Record<string, string | undefined>;

export interface Io {
  env: Env;
  /** Writes `text` and a newline to stdout. */
  out(text: string): void;
  /** Writes `text` and a newline to stderr. */
  err(text: string): void;
  color: Colors;
}

/**
 * A subcommand as the command line knows it before running it: its name and help, cheap to hold,
 * and a loader for its code, which imports the database layer and the rest only when it runs.
 */
export interface Command {
  name: string;
  /** One line for the top-level help. */
  summary: string;
  /** The full `--help` text. */
  usage: string;
  load(): Promise<RunCommand>;
  /** The command hands work to runtime modules that may leave handles open: exit once output is flushed. */
  exitWhenDone?: boolean;
}

/** Runs a subcommand; returns the exit code (0 when nothing is returned). */
export type RunCommand = (args: string[], io: Io) => Promise<number | void>;

/** Bad input on the command line: exit 2 with a hint to the command's --help. */
export class UsageError extends Error {
  override name = "UsageError";
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

/** An expected runtime failure whose message is all the user needs: exit 1. */
export class CliError extends Error {
  override name = "CliError";
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** node:util parseArgs (strict by default), with its errors turned into UsageErrors. */
export function parseCommandArgs<T extends ParseArgsConfig>(command: string, config: T) {
  try {
    return parseArgs(config);
  } catch (error) {
    const code = (error as { code?: string }).code ?? "";
    if (code.startsWith("ERR_PARSE_ARGS")) {
      throw new UsageError(shortParseError((error as Error).message), command);
    }
    throw error;
  }
}

/** `--tree ID`: the tree a command looks in (default: the most recent). */
export const TREE_OPTION = { tree: { type: "string" } } as const;

/** `--json`: the output as JSON, for scripts. */
export const JSON_OPTION = { json: { type: "boolean", default: false } } as const;

/** A subcommand's `options`, parsed strictly; its positionals are left for it to check. */
export function parseCommand<O extends NonNullable<ParseArgsConfig["options"]>>(
  command: string,
  args: string[],
  options: O,
) {
  return parseCommandArgs(command, { args, allowPositionals: true as const, options });
}

/** parseCommand for a subcommand whose positionals are exactly `required` (their names in errors). */
export function parseCommandLine<O extends NonNullable<ParseArgsConfig["options"]>>(
  command: string,
  required: string[],
  args: string[],
  options: O,
) {
  const parsed = parseCommand(command, args, options);
  expectPositionals(parsed.positionals, command, { required });
  return parsed;
}

/**
 * node's parseArgs messages in a line of ours: "Unknown option '--x'. To specify a positional
 * argument starting with a '-', …" → "unknown option --x"; "Option '-p, --prompt <value>'
 * argument missing" → "-p, --prompt needs a value".
 */
export function shortParseError(message: string): string {
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  if (unknown) return `unknown option ${unknown[1]}`;
  const missing = /^Option '([^']+?)(?: <value>)?' argument missing/.exec(message);
  if (missing) return `${missing[1]} needs a value`;
  return (message.split("\n")[0] ?? "").replace(/\.\s.*$/, "");
}

/** A whole number ≥ `min`, or a UsageError naming the option. */
export function parseInteger(
  value: string | undefined,
  option: string,
  command: string,
  min = 1,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < min) {
    throw new UsageError(`${option} must be a whole number ≥ ${min}, not "${value}"`, command);
  }
  return n;
}

/** A number of seconds > 0 (fractions allowed), or a UsageError. */
export function parseSeconds(
  value: string | undefined,
  option: string,
  command: string,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!value.trim() || !Number.isFinite(n) || n <= 0) {
    throw new UsageError(`${option} must be a number of seconds > 0, not "${value}"`, command);
  }
  return n;
}

export function expectPositionals(
  positionals: string[],
  command: string,
  names: { required: string[]; optional?: string[] },
): void {
  const { required, optional = [] } = names;
  if (positionals.length < required.length) {
    throw new UsageError(`missing ${required[positionals.length]}`, command);
  }
  if (positionals.length > required.length + optional.length) {
    const extra = positionals[required.length + optional.length];
    throw new UsageError(`unexpected argument "${extra}"`, command);
  }
}
