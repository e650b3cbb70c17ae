// What the person's input does: a message to the viewed agent (queued while it is busy), a
// captured line, or a slash command — a built-in from the command table (commands/table.ts) or
// one of the person's own (command files and skills, skills/listing.ts), whose expanded text is
// sent as their message. Failures become one-line notices, never exceptions.
import type { AgentRow } from "../agents/agents.sql.js";
import { appendEvent } from "../agents/events.js";
import { displayName, resolveAgentRef } from "../agents/refs.js";
import type { Config } from "../config/config.js";
import { watchTrust } from "../config/trust.js";
import type { Db } from "../db/client.js";
import { listModels } from "../llm/model-list.js";
import { sendInput } from "../mail/input.js";
import { commandShell } from "../runtime/command-shell.js";
import { interruptAgent } from "../runtime/interrupt.js";
import { findPersonCommand, personCommands, type PersonCommand } from "../skills/listing.js";
import { isCommand, parseCommand, type UiCommand } from "./commands.js";
import { answerRequest } from "./commands/approvals.js";
import type { RewindAsk } from "./rewind-action.js";
import { stopSubtree } from "./commands/agents.js";
import { BUILTIN_NAMES, commandSpec } from "./commands/table.js";
import type { CommandContext } from "./commands/types.js";
import type { Controller } from "./controller.js";
import { describeFailure } from "./failure.js";
import { primeTrust, syncTrust } from "./trust-sync.js";
import type { StoreWatch } from "../trust-store.js";
import { byAge } from "./views/navigation.js";

export interface Actions {
  /** Enter: the input's whole text. False when a message could not be saved (so it is not lost). */
  submit(text: string): Promise<boolean>;
  /** Escape / first Ctrl+C: interrupts the viewed agent's turn (not its children). */
  interrupt(): Promise<boolean>;
  /** The stop key (as /stop): interrupts the viewed agent and all its descendants. */
  stop(): Promise<void>;
  readonly mode: "normal" | "capture";
  /** Model names for /model completion (cached; empty when the server has no /models). */
  modelNames(): Promise<string[]>;
  /** The person's own commands (command files, skills) as they are on disk now. */
  personCommands(): PersonCommand[];
  /**
   * Watches the trust stores from now: a `warren trust` (or `--revoke`, `warren mcp allow`) in
   * another shell is applied here as `/trust` is (trust-sync.ts), within about a second.
   */
  watchTrust(): StoreWatch;
  /** A rewind the /rewind picker confirmed: run as a second `/rewind N [files|conversation]`. */
  rewind(ask: RewindAsk): Promise<void>;
  /**
   * Answers an approval request (the y/a/n keys; /approve and /deny come through submit). A
   * request answered first elsewhere becomes a notice saying by whom; false then.
   */
  answer(
    id: number,
    allow: boolean,
    options?: { tree?: boolean; reason?: string },
  ): Promise<boolean>;
}

export interface ActionsOptions {
  db: Db;
  config: Config;
  controller: Controller;
  /** Text for /help (given the person's own commands, listed after the built-ins). */
  helpLines: (own: readonly PersonCommand[]) => string[];
  /** One line per agent, for /agents. */
  treeLines: () => string[];
  /** /search TEXT: the app opens the result list and runs the query. */
  search: (query: string) => void;
  /** /tasks: show the task board. */
  tasks: () => void;
  /** /rewind with no turn: the app opens the picker of the agent's turns (tests may leave it out). */
  rewind?: (agentId: string, agentName: string) => void;
  quit: () => void;
  onChange: () => void;
  /** Where the person's command files and skills are looked for (default: process.cwd()). */
  cwd?: string;
  /** Whose home the person's own command files and skills are read from (default: process.env). */
  env?: Record<string, string | undefined>;
  /** `config` changed in place (`/trust`): the runtime's threads take it too. */
  configChanged?: () => void;
}

export function createActions(options: ActionsOptions): Actions {
  const { db, config, controller } = options;
  const cwd = options.cwd ?? process.cwd();
  // Capture is per agent: its lines wait for /fork there, while you look at other agents.
  const captures = new Map<string, string[]>();
  let models: Promise<string[]> | undefined;

  const state = controller.state;
  const current = (): AgentRow | undefined => controller.current();
  const say = (text: string) => controller.notice(text, "info");
  const complain = (text: string) => controller.notice(text, "error");

  /**
   * The person's commands, read again each time (a few small files): a file added or fixed
   * counts at once. Each warning (a bad front matter, a built-in's name taken) is said once.
   */
  const warned = new Set<string>();
  const own = (): PersonCommand[] => {
    const found = personCommands(cwd, BUILTIN_NAMES, options.env);
    for (const warning of found.warnings) {
      if (warned.has(warning)) continue;
      warned.add(warning);
      complain(warning);
    }
    return found.commands;
  };

  /**
   * The answer to a recorded command (`killed …`, `mail sent …`): a `command` event below it on
   * the same agent, so another view, another TUI or a restart still shows what it did; shown
   * as a notice where the person is when that is elsewhere, or when it cannot be written.
   */
  const reply = async (agentId: string, text: string, level: "info" | "error" = "info") => {
    const event = await appendEvent(db, agentId, "command", text, {
      by: "person",
      answer: level,
    }).catch(() => undefined);
    if (event) controller.addEvent(event);
    if (!event || agentId !== state.currentId) controller.notice(text, level);
  };

  const capturing = () => captures.get(state.currentId);
  const session: CommandContext["session"] = {};
  const base = {
    db,
    config,
    cwd,
    env: options.env ?? process.env,
    controller,
    current,
    say,
    complain,
    reply,
    capturing,
    session,
    resolve: (ref: string) =>
      resolveAgentRef(db, { treeId: state.rootId, selfId: state.currentId }, ref),
    setMode(next: "normal" | "capture") {
      if (next === "capture") captures.set(state.currentId, []);
      else captures.delete(state.currentId);
      options.onChange();
    },
    ui: {
      helpLines: () => options.helpLines(own()),
      treeLines: options.treeLines,
      search: options.search,
      tasks: options.tasks,
      rewind: options.rewind ?? (() => complain("/rewind: no picker here; type /rewind N")),
      quit: options.quit,
      onChange: options.onChange,
      configChanged: () => options.configChanged?.(),
    },
  };

  /** Runs a command; a failure after it was recorded is answered below the record, like success. */
  async function run(command: UiCommand, typed: string): Promise<void> {
    let recordedOn: string | undefined;
    const ctx: CommandContext = {
      ...base,
      /**
       * A `command` event on the agent the command was typed into (never model context), shown
       * at once: the notice answering the command must land below it, not above.
       */
      async record(agentId, text, data = {}) {
        controller.addEvent(
          await appendEvent(db, agentId, "command", text, { by: "person", ...data }),
        );
        recordedOn = agentId;
      },
    };
    // A /discard's question holds only until the next command.
    if (command.name !== "discard") session.discardAsked = undefined;
    if (command.name !== "rewind") session.rewindAsked = undefined;
    try {
      await commandSpec(command.name).run(ctx, command as never, typed);
    } catch (error) {
      if (recordedOn === undefined) throw error;
      await reply(recordedOn, describeFailure(error), "error");
    }
  }

  /** Sends (or captures) `body` as the person's message to the viewed agent. */
  async function message(body: string): Promise<boolean> {
    const agent = current();
    if (agent?.state === "dead") {
      complain(`${displayName(agent)} is dead: it takes no input`);
      return true;
    }
    const captured = capturing();
    if (captured) {
      await appendEvent(db, state.currentId, "capture", body, { by: "person" });
      captured.push(body);
      return true;
    }
    await sendInput(db, state.currentId, body, config.limits.maxMessageBytes);
    return true;
  }

  /**
   * `/name ARGS` naming a command file or a skill: its text, expanded (its `` !`cmd` `` through
   * the policy as the viewed agent's bash would be), is the person's message. Undefined: no such
   * command.
   */
  async function runOwn(text: string, commands: PersonCommand[]): Promise<boolean | undefined> {
    const found = findPersonCommand(commands, text);
    if (!found) return undefined;
    const agent = current();
    if (agent?.state === "dead") {
      complain(`${displayName(agent)} is dead: it takes no input`);
      return true;
    }
    const where = agent?.cwd ?? cwd;
    const shell = commandShell({
      config,
      cwd: where,
      ...(agent ? { agent } : {}),
      onWarning: (line) => complain(`/${found.command.name}: ${line}`),
    });
    const expanded = await found.command.expand(found.args, { cwd: where, shell });
    for (const warning of expanded.warnings) complain(`/${found.command.name}: ${warning}`);
    if (!expanded.text.trim()) {
      complain(`/${found.command.name}: the command's text is empty; nothing sent`);
      return true;
    }
    return message(expanded.text);
  }

  return {
    get mode() {
      return capturing() ? "capture" : "normal";
    },
    async submit(text) {
      const command = isCommand(text);
      try {
        if (command) {
          const commands = own();
          const ran = await runOwn(text, commands);
          if (ran !== undefined) return ran;
          const parsed = parseCommand(
            text,
            commands.map((c) => c.name),
          );
          if (!parsed.ok) complain(parsed.error);
          else await run(parsed.command, text.trim());
          return true;
        }
        return await message(text.startsWith("//") ? text.slice(1) : text);
      } catch (error) {
        complain(describeFailure(error));
        return command;
      }
    },
    async interrupt() {
      try {
        return await interruptAgent(db, state.currentId);
      } catch (error) {
        complain(`interrupt failed: ${describeFailure(error)}`);
        return false;
      }
    },
    async stop() {
      const target = current();
      if (!target) return;
      try {
        await stopSubtree(base, target, (text, level) => controller.notice(text, level));
      } catch (error) {
        complain(`stop failed: ${describeFailure(error)}`);
      }
    },
    modelNames() {
      models ??= listModels({
        ...(config.model.baseURL ? { baseURL: config.model.baseURL } : {}),
        ...(config.model.apiKey ? { apiKey: config.model.apiKey } : {}),
        timeoutMs: 5000,
      }).then(
        (listed) => (listed ?? []).map((m) => m.id).sort(),
        () => [],
      );
      return models;
    },
    personCommands: own,
    watchTrust() {
      primeTrust(base);
      // A failure is one notice; the watch goes on.
      return watchTrust(
        base.env,
        () => void syncTrust(base).catch((error: unknown) => complain(describeFailure(error))),
      );
    },
    async rewind(ask) {
      // Confirmed in the picker: the command runs as typed the second time (recorded, answered).
      const typed = `/rewind ${ask.turn}${ask.mode === "both" ? "" : ` ${ask.mode}`}`;
      session.rewindAsked = ask;
      await run({ name: "rewind", turn: ask.turn, mode: ask.mode }, typed);
    },
    async answer(id, allow, answerOptions) {
      try {
        await answerRequest(base, id, allow, answerOptions);
        return true;
      } catch (error) {
        complain(describeFailure(error));
        controller.refreshApprovals();
        return false;
      }
    },
  };
}

/** The agents of the tree as indented lines (for /agents). */
export function treeLines(agents: readonly AgentRow[], currentId: string): string[] {
  const children = new Map<string | null, AgentRow[]>();
  for (const agent of [...agents].sort(byAge)) {
    const list = children.get(agent.parent_id) ?? [];
    list.push(agent);
    children.set(agent.parent_id, list);
  }
  const lines: string[] = [];
  const walk = (parentId: string | null, depth: number) => {
    for (const agent of children.get(parentId) ?? []) {
      const mark = agent.id === currentId ? " ← you are here" : "";
      const doing = agent.activity ? ` — ${agent.activity}` : "";
      lines.push(`${"  ".repeat(depth)}${displayName(agent)}  ${agent.state}${doing}${mark}`);
      walk(agent.id, depth + 1);
    }
  };
  const roots = agents.filter((a) => !a.parent_id || !agents.some((p) => p.id === a.parent_id));
  for (const root of roots) {
    const mark = root.id === currentId ? " ← you are here" : "";
    lines.push(`${displayName(root)}  ${root.state}${mark}`);
    walk(root.id, 1);
  }
  return lines;
}
