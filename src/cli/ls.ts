// `warren ls`: the agents of a tree (default: the most recent) with state and counters.
import { listTree } from "../agents/tree.js";
import type { Db } from "../db/client.js";
import { renderAgentTable, treeSummary } from "./agent-table.js";
import { expectPositionals, parseCommandArgs, type Command, type Io } from "./command.js";
import { jsonText } from "./format.js";
import { treeOrLatest, withDatabase } from "./scope.js";

export const ls: Command = {
  name: "ls",
  summary: "list the agents of a tree with state and counters",
  usage: `Usage: warren ls [--tree ID] [--all] [--json]

List the agents of a tree (default: the most recently active one), indented as a tree,
with state, turns, tool calls, tokens in/out, age and last activity.

Options:
  --tree ID   the tree: a root's id or a unique prefix of it (4+ characters)
  --all       include reaped agents
  --json      print a JSON array of agent objects
  -h, --help  show this help`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs("ls", {
      args,
      allowPositionals: true,
      options: {
        tree: { type: "string" },
        all: { type: "boolean", default: false },
        json: { type: "boolean", default: false },
      },
    });
    expectPositionals(positionals, "ls", { required: [] });
    await withDatabase(io.env, (db) =>
      printTree(db, io, values.tree, { json: values.json, all: values.all }),
    );
  },
};

/** Prints one tree as `ls` does; shared with the top-level `warren`. */
export async function printTree(
  db: Db,
  io: Io,
  treeRef: string | undefined,
  options: { json: boolean; all: boolean },
): Promise<void> {
  const root = await treeOrLatest(db, treeRef);
  if (!root) {
    if (options.json) io.out("[]");
    else io.out("there are no trees yet; run `warren` to start one");
    return;
  }
  const list = await listTree(db, root.id, { includeReaped: options.all });
  if (options.json) {
    io.out(jsonText(list, 2));
    return;
  }
  io.out(treeSummary(root, list, io.color));
  for (const line of renderAgentTable(list, io.color)) io.out(line);
}
