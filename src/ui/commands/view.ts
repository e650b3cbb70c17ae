// Commands that show something: /help, /agents, /search, /tasks; and /exit.
import { noArgs, type CommandSpec } from "./types.js";

export const help: CommandSpec<"help"> = {
  name: "help",
  aliases: ["?"],
  usage: "/help",
  help: "keys and commands (this list)",
  parse: noArgs("help"),
  run: (ctx) => ctx.say(ctx.ui.helpLines().join("\n")),
};

export const exit: CommandSpec<"exit"> = {
  name: "exit",
  aliases: ["quit", "q"],
  usage: "/exit",
  help: "quit (agents keep their state; a worker or the next warren resumes them)",
  parse: noArgs("exit"),
  run: (ctx) => ctx.ui.quit(),
};

export const agents: CommandSpec<"agents"> = {
  name: "agents",
  usage: "/agents",
  help: "the tree with states",
  parse: noArgs("agents"),
  run: (ctx) => ctx.say(ctx.ui.treeLines().join("\n")),
};

export const search: CommandSpec<"search"> = {
  name: "search",
  usage: "/search TEXT",
  help: "every agent's transcript, dead ones too; Enter jumps to the line",
  // The text as typed (quotes kept: "a phrase" is websearch syntax), not split like arguments.
  parse: (_args, rest, usage) =>
    rest ? { name: "search", query: rest } : { error: `/search needs text to look for (${usage})` },
  run: (ctx, command) => ctx.ui.search(command.query),
};

export const tasks: CommandSpec<"tasks"> = {
  name: "tasks",
  usage: "/tasks",
  help: "the tree's task board, live (Esc closes)",
  parse: noArgs("tasks"),
  run: (ctx) => ctx.ui.tasks(),
};
