// The TUI's command table: every built-in slash command once, in the order /help lists them.
// The dispatcher (ui/commands.ts parseCommand, ui/actions.ts), /help and Tab completion read it;
// the person's own commands (command files, skills: skills/listing.ts) join it at run time but
// never take one of these names.
import * as agents from "./agents.js";
import * as approvals from "./approvals.js";
import * as mcp from "./mcp.js";
import * as rewind from "./rewind.js";
import type { PersonCommand } from "../../skills/listing.js";
import type { CommandName, CommandSpec } from "./types.js";
import * as view from "./view.js";
import * as worktree from "./worktree.js";

export const COMMANDS: readonly CommandSpec[] = [
  agents.capture,
  agents.cancel,
  agents.fork,
  rewind.rewind,
  worktree.diff,
  worktree.merge,
  worktree.discard,
  agents.kill,
  agents.stop,
  agents.send,
  agents.wait,
  agents.reap,
  view.agents,
  agents.model,
  approvals.approve,
  approvals.deny,
  view.search,
  view.tasks,
  mcp.mcp,
  mcp.trust,
  view.help,
  view.exit,
] as CommandSpec[];

const BY_NAME = new Map<string, CommandSpec>();
for (const spec of COMMANDS) {
  BY_NAME.set(spec.name, spec);
  for (const alias of spec.aliases ?? []) BY_NAME.set(alias, spec);
}

/** Every name and alias a built-in answers to (lower case): no command file may take one. */
export const BUILTIN_NAMES: ReadonlySet<string> = new Set(BY_NAME.keys());

/** The built-in command typed as `name` (or an alias), if any. */
export function builtinCommand(name: string): CommandSpec | undefined {
  return BY_NAME.get(name.toLowerCase());
}

export function commandSpec<N extends CommandName>(name: N): CommandSpec<N> {
  return BY_NAME.get(name) as unknown as CommandSpec<N>;
}

/** /help's rows: every built-in, then the person's own commands (command files, skills). */
export function helpRows(own: readonly PersonCommand[] = []): [string, string][] {
  return [
    ...COMMANDS.map((c): [string, string] => [c.usage, c.help]),
    ...own.map((c): [string, string] => [c.usage, c.help]),
  ];
}
