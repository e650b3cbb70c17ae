// `warren diff|merge|discard AGENT`: a worktree child's change (SPEC §3 "Worktrees").
import type { AgentRow } from "../agents/agents.sql.js";
import { diffAgent, discardAgent, mergeAgent, WorktreeError } from "../agents/worktree-ops.js";
import type { Db } from "../db/client.js";
import { CliError, expectPositionals, parseCommandArgs, type RunCommand } from "./command.js";
import { resolveAgent, withDatabase } from "./scope.js";

async function onAgent(
  name: string,
  args: string[],
  io: Parameters<RunCommand>[1],
  body: (db: Db, agent: AgentRow, yes: boolean) => Promise<string>,
): Promise<void> {
  const { values, positionals } = parseCommandArgs(name, {
    args,
    allowPositionals: true,
    options: {
      tree: { type: "string" },
      ...(name === "discard" ? { yes: { type: "boolean", short: "y" } } : {}),
    },
  });
  expectPositionals(positionals, name, { required: ["AGENT"] });
  await withDatabase(io.env, async (db) => {
    const agent = await resolveAgent(db, positionals[0]!, values.tree as string | undefined);
    try {
      const text = await body(db, agent, values.yes === true);
      if (text) io.out(text.replace(/\n$/, ""));
    } catch (err) {
      if (err instanceof WorktreeError) throw new CliError(err.message);
      throw err;
    }
  });
}

export const runDiff: RunCommand = (args, io) =>
  onAgent("diff", args, io, async (_db, agent) => {
    const text = await diffAgent(agent);
    return text || `${agent.name} changed nothing`;
  });

export const runMerge: RunCommand = (args, io) =>
  onAgent("merge", args, io, (db, agent) => mergeAgent(db, agent));

export const runDiscard: RunCommand = (args, io) =>
  onAgent("discard", args, io, async (db, agent, yes) => {
    if (!yes) {
      throw new CliError(
        `discard removes ${agent.name}'s worktree and branch with its work; run again with --yes to confirm`,
      );
    }
    return discardAgent(db, agent);
  });
