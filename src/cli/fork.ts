// `warren fork AGENT --at N [--worktree] [--name NAME] [PROMPT]` (issue 43, SPEC §11): a new
// sibling of AGENT whose conversation is AGENT's before turn N (as `warren rewind --list` numbers
// turns), with --worktree on that turn's files in a git worktree of its own.
import { branchAgent } from "../runtime/branch.js";
import { AgentError } from "../agents/errors.js";
import { RewindError } from "../agents/rewind.js";
import { DEFAULT_CHECKPOINTS, loadConfig } from "../config/config.js";
import { shownName } from "../text/format.js";
import { CliError, parseCommand, TREE_OPTION, UsageError, type RunCommand } from "./command.js";
import { resolveAgent, withDatabase } from "./scope.js";

export const runFork: RunCommand = async (args, io) => {
  const { values, positionals } = parseCommand("fork", args, {
    ...TREE_OPTION,
    at: { type: "string" },
    worktree: { type: "boolean" },
    name: { type: "string" },
  });
  if (positionals.length === 0) throw new UsageError("missing AGENT", "fork");
  if (values.at === undefined) throw new UsageError("missing --at N", "fork");
  const n = Number(values.at);
  if (!Number.isInteger(n) || n < 1) {
    throw new UsageError(`--at takes a turn number as listed, got "${values.at}"`, "fork");
  }
  const prompt = positionals.slice(1).join(" ").trim();
  const config = loadConfig(io.env);
  await withDatabase(io.env, async (db) => {
    const agent = await resolveAgent(db, positionals[0]!, values.tree);
    try {
      const branch = await branchAgent(db, config, agent, n, {
        ...(values.name ? { name: values.name } : {}),
        ...(prompt ? { prompt } : {}),
        worktree: values.worktree === true,
        maxFileBytes: (config.checkpoints ?? DEFAULT_CHECKPOINTS).maxFileBytes,
      });
      const where = branch.worktree ? ` in ${branch.worktree.path}` : "";
      const state = prompt ? "it is running" : "it waits for its first message (warren send)";
      io.out(
        `forked ${shownName(branch)} from ${shownName(agent)} before turn ${n}${where}; ${state}`,
      );
    } catch (err) {
      if (err instanceof RewindError || err instanceof AgentError) throw new CliError(err.message);
      throw err;
    }
  });
};
