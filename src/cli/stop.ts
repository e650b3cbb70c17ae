// `warren stop AGENT`: interrupts an agent and its whole subtree, as /stop does in the TUI. Model
// streams and tools stop; every agent stays alive and takes mail afterwards (`warren kill` ends them).
import { interruptSubtree } from "../runtime/interrupt.js";
import { CliError, parseCommandLine, TREE_OPTION, type RunCommand } from "./command.js";
import { shownName } from "../text/format.js";
import { resolveAgent, withDatabase } from "./scope.js";

export const runStop: RunCommand = async (args, io) => {
  const { values, positionals } = parseCommandLine("stop", ["AGENT"], args, TREE_OPTION);
  await withDatabase(io.env, async (db) => {
    const agent = await resolveAgent(db, positionals[0]!, values.tree);
    if (agent.state === "dead") throw new CliError(`${shownName(agent)} is dead: nothing to stop`);
    const n = (await interruptSubtree(db, agent.id)).length;
    io.out(`stopped ${n} agent${n === 1 ? "" : "s"} (${shownName(agent)} and its descendants)`);
  });
};
