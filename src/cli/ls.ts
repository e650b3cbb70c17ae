// `warren ls`: the agents of a tree (default: the most recent) with state and counters.
import type { AgentRow } from "../agents/agents.sql.js";
import { sumCounters } from "../agents/totals.js";
import { listTree } from "../agents/tree.js";
import type { Db } from "../db/client.js";
import { renderAgentTable, totalsLine, treeSummary } from "./agent-table.js";
import { expectPositionals, parseCommandArgs, type Command, type Io } from "./command.js";
import { jsonText } from "./format.js";
import { treeOrLatest, withDatabase } from "./scope.js";

export const ls: Command = {
  name: "ls",
  summary: "list the agents of a tree with state and counters",
  usage: `Usage: warren ls [--tree ID] [--all] [--json]

List the agents of a tree (default: the most recently active one), indented as a tree,
with state, turns, tool calls, tokens in/out, age and last activity, then the tree's totals
(input tokens with those served from the server's cache, output tokens with those spent on
reasoning). Totals count every agent the tree has had, reaped ones included.

Options:
  --tree ID   the tree: a root's id or a unique prefix of it (4+ characters)
  --all       include reaped agents
  --totals    print only the tree's totals
  --json      print a JSON array of agent objects (with --totals: one totals object)
  -h, --help  show this help`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs("ls", {
      args,
      allowPositionals: true,
      options: {
        tree: { type: "string" },
        all: { type: "boolean", default: false },
        totals: { type: "boolean", default: false },
        json: { type: "boolean", default: false },
      },
    });
    expectPositionals(positionals, "ls", { required: [] });
    await withDatabase(io.env, (db) =>
      printTree(db, io, values.tree, {
        json: values.json,
        all: values.all,
        totals: values.totals,
      }),
    );
  },
};

/** Prints one tree as `ls` does; shared with the top-level `warren`. */
export async function printTree(
  db: Db,
  io: Io,
  treeRef: string | undefined,
  options: { json: boolean; all: boolean; totals?: boolean },
): Promise<void> {
  const root = await treeOrLatest(db, treeRef);
  if (!root) {
    if (options.json) io.out(options.totals ? jsonText(totalsJson(null, [], 0), 2) : "[]");
    else io.out("there are no trees yet; run `warren` to start one");
    return;
  }
  const every = await listTree(db, root.id, { includeReaped: true });
  const living = every.filter((agent) => !agent.reaped_at);
  const list = options.all ? every : living;
  const reaped = every.length - living.length;
  if (options.totals) {
    io.out(
      options.json
        ? jsonText(totalsJson(root.id, every, reaped), 2)
        : totalsLine(sumCounters(every), reaped, io.color),
    );
    return;
  }
  if (options.json) {
    io.out(jsonText(list, 2));
    return;
  }
  io.out(treeSummary(root, list, io.color));
  for (const line of renderAgentTable(list, io.color)) io.out(line);
  // Reaped agents' tokens were spent all the same, so the totals always include them.
  io.out(totalsLine(sumCounters(every), reaped, io.color));
}

function totalsJson(treeId: string | null, every: AgentRow[], reaped: number): object {
  return { tree_id: treeId, ...sumCounters(every), reaped };
}
