// `warren ls`: the agents of a tree (default: the most recent) with state and counters.
import { changesOf, describeChanges } from "../agents/worktree.js";
import { escapeLine } from "../text/escape.js";
import type { AgentRow } from "../agents/agents.sql.js";
import { agentCost, treeCost, type Pricing } from "../agents/cost.js";
import { sumCounters } from "../agents/totals.js";
import { listTree } from "../agents/tree.js";
import { loadConfig } from "../config/config.js";
import type { Db } from "../db/client.js";
import { renderAgentTable, totalsLine, treeSummary } from "./agent-table.js";
import { parseCommandLine, TREE_OPTION, JSON_OPTION, type RunCommand, type Io } from "./command.js";
import { jsonText } from "../text/format.js";
import { treeOrLatest, withDatabase } from "./scope.js";

export const runLs: RunCommand = async (args, io) => {
  const { values } = parseCommandLine("ls", [], args, {
    ...TREE_OPTION,
    all: { type: "boolean", default: false },
    totals: { type: "boolean", default: false },
    ...JSON_OPTION,
  });
  const config = loadConfig(io.env);
  await withDatabase(io.env, (db) =>
    printTree(db, io, values.tree, {
      json: values.json,
      all: values.all,
      totals: values.totals,
      pricing: { prices: config.prices, model: config.model.name },
    }),
  );
};

/** Prints one tree as `ls` does; shared with the top-level `warren`. */
export async function printTree(
  db: Db,
  io: Io,
  treeRef: string | undefined,
  options: { json: boolean; all: boolean; totals?: boolean; pricing?: Pricing },
): Promise<void> {
  const { prices, model } = options.pricing ?? { prices: {} };
  const costOf = (agent: AgentRow) => agentCost(agent, prices, model);
  const root = await treeOrLatest(db, treeRef);
  if (!root) {
    if (options.json) io.out(options.totals ? jsonText(totalsJson(null, [], 0, null), 2) : "[]");
    else io.out("there are no trees yet; run `warren` to start one");
    return;
  }
  const every = await listTree(db, root.id, { includeReaped: true });
  const living = every.filter((agent) => !agent.reaped_at);
  const list = options.all ? every : living;
  const reaped = every.length - living.length;
  // Reaped agents' tokens were spent all the same, so the totals always include them.
  const cost = treeCost(every, prices, model);
  if (options.totals) {
    io.out(
      options.json
        ? jsonText(totalsJson(root.id, every, reaped, cost ?? null), 2)
        : totalsLine(sumCounters(every), reaped, io.color, cost),
    );
    return;
  }
  // Worktrees still there (a reaped agent's too: one with unmerged work stays until merged or
  // discarded), with what each changed, worked out now.
  const kept = every.filter((a) => a.worktree && !a.worktree.removed);
  const changes = new Map(
    await Promise.all(
      kept.map(async (a) => [a.id, await changesOf(a.worktree!).catch(() => null)] as const),
    ),
  );
  if (options.json) {
    io.out(
      jsonText(
        list.map((agent) => ({
          ...agent,
          cost_usd: costOf(agent) ?? null,
          ...(changes.has(agent.id) ? { changes: changes.get(agent.id) ?? null } : {}),
        })),
        2,
      ),
    );
    return;
  }
  io.out(treeSummary(root, list, io.color));
  for (const line of renderAgentTable(list, io.color, Date.now(), costOf)) io.out(line);
  io.out(totalsLine(sumCounters(every), reaped, io.color, cost));
  if (kept.length > 0) io.out("worktrees (warren diff|merge|discard AGENT):");
  for (const a of kept) {
    const c = changes.get(a.id);
    const what = c ? describeChanges(c) : "gone";
    const note = a.reaped_at ? " (reaped, unmerged)" : "";
    io.out(
      `  ${escapeLine(a.name)} ${a.id.slice(0, 8)}  ${escapeLine(a.worktree!.branch)}  ${what}${note}`,
    );
  }
}

function totalsJson(
  treeId: string | null,
  every: AgentRow[],
  reaped: number,
  costUsd: number | null,
): object {
  return { tree_id: treeId, ...sumCounters(every), reaped, cost_usd: costUsd };
}
