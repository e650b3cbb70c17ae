// What a slash command is (SPEC section 4): declared once with its name, arguments, help line and
// handler; `/help`, Tab completion and the dispatcher all read the same table (table.ts).
import type { AgentRow } from "../../agents/agents.sql.js";
import type { Config } from "../../config/config.js";
import type { Db } from "../../db/client.js";
import type { Controller } from "../controller.js";
import type { RewindAsk } from "../rewind-action.js";

export type UiCommand =
  | { name: "capture" }
  | { name: "cancel" }
  | { name: "fork"; childName?: string; prompt?: string; worktree?: boolean; at?: number }
  | { name: "rewind"; turn?: number; mode: "both" | "files" | "conversation" }
  | { name: "diff"; agent?: string }
  | { name: "merge"; agent?: string }
  | { name: "discard"; agent?: string }
  | { name: "kill"; agent?: string }
  | { name: "stop"; agent?: string }
  | { name: "send"; agent: string; message: string }
  | { name: "wait"; timeoutSeconds: number; agents: string[] }
  | { name: "reap" }
  | { name: "agents" }
  | { name: "model"; model: string }
  | { name: "approve"; id?: number; tree: boolean }
  | { name: "deny"; id?: number; reason?: string }
  | { name: "search"; query: string }
  | { name: "tasks" }
  | { name: "mcp"; allow?: boolean }
  | { name: "trust" }
  | { name: "help" }
  | { name: "exit" };

export type CommandName = UiCommand["name"];
export type CommandOf<N extends CommandName> = Extract<UiCommand, { name: N }>;

/** A command's arguments parsed: the command, or a one-line explanation of what is wrong. */
export type Parsed<N extends CommandName> = CommandOf<N> | { error: string };

/** What this process uses as trusted (trust-sync.ts): each project file it could use, and the .mcp.json. */
export interface TrustView {
  /** Settings, skill and command files → trusted as they are now. */
  files: Map<string, boolean>;
  /** The project's .mcp.json (as read at start) is allowed. */
  mcp: boolean;
}

/** What the TUI gives every handler. */
export interface CommandContext {
  db: Db;
  /** The process's config: `/trust` replaces its trust-dependent parts in place (config/reload.ts). */
  config: Config;
  /** Where warren started (the person's project) and its environment. */
  cwd: string;
  env: Record<string, string | undefined>;
  controller: Controller;
  current(): AgentRow | undefined;
  /** A notice in the current view. */
  say(text: string): void;
  complain(text: string): void;
  /** An agent by name, id or short id in this tree (throws a one-line error). */
  resolve(ref: string): Promise<AgentRow>;
  /** Records the typed command on `agentId` (a `command` event); a later failure answers below it. */
  record(agentId: string, text: string, data?: Record<string, unknown>): Promise<void>;
  /** The answer to a recorded command, below it on the same agent. */
  reply(agentId: string, text: string, level?: "info" | "error"): Promise<void>;
  /** The viewed agent's captured lines while it is in capture mode. */
  capturing(): string[] | undefined;
  setMode(mode: "normal" | "capture"): void;
  /**
   * State one command leaves for the next (a first /discard's or /rewind's question), and what
   * this process uses as trusted (trust-sync.ts).
   */
  session: { discardAsked?: string; rewindAsked?: RewindAsk; trust?: TrustView };
  ui: {
    helpLines(): string[];
    treeLines(): string[];
    search(query: string): void;
    tasks(): void;
    /** Opens the /rewind picker of the agent's turns. */
    rewind(agentId: string, agentName: string): void;
    quit(): void;
    onChange(): void;
    /** `config` changed in place (`/trust`): the worker threads take it too. */
    configChanged(): void;
  };
}

export interface CommandSpec<N extends CommandName = CommandName> {
  name: N;
  aliases?: string[];
  /** How it is typed: `/kill [AGENT]`. */
  usage: string;
  /** One line for /help. */
  help: string;
  /** `args` split like a shell; `rest` the text after the name as typed; `usage` for errors. */
  parse(args: string[], rest: string, usage: string): Parsed<N>;
  run(ctx: CommandContext, command: CommandOf<N>, typed: string): Promise<void> | void;
}

/** A command that takes no arguments. */
export function noArgs<N extends CommandName>(name: N) {
  return (args: string[], _rest: string, usage: string): Parsed<N> =>
    args.length > 0
      ? { error: `/${name} takes no arguments (${usage})` }
      : ({ name } as CommandOf<N>);
}

type OneAgentName = "kill" | "stop" | "diff" | "merge" | "discard";

/** A command with at most one agent argument. */
export function oneAgent<N extends OneAgentName>(name: N) {
  return (args: string[], _rest: string, usage: string): Parsed<N> =>
    args.length > 1
      ? { error: `/${name} takes at most one agent (${usage})` }
      : ({ name, ...(args[0] ? { agent: args[0] } : {}) } as CommandOf<N>);
}

/** Runs `body`; an `expected` error is the person's one line, anything else goes on up. */
export async function complainOn(
  ctx: Pick<CommandContext, "complain">,
  expected: abstract new (...args: never[]) => Error,
  body: () => Promise<void>,
): Promise<void> {
  try {
    await body();
  } catch (err) {
    if (err instanceof expected) return ctx.complain(err.message);
    throw err;
  }
}

/** The agent a oneAgent command names, else the viewed one; with neither, says so: undefined. */
export async function commandTarget(
  ctx: Pick<CommandContext, "resolve" | "current" | "complain">,
  command: CommandOf<OneAgentName>,
): Promise<AgentRow | undefined> {
  const target = command.agent ? await ctx.resolve(command.agent) : ctx.current();
  if (!target) ctx.complain(`no agent to ${command.name}`);
  return target;
}
