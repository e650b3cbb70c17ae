// `warren kill AGENT`: kills an agent and its whole subtree, as the person (never the root).
import { killAgent } from "../agents/tree.js";
import { parseCommandLine, TREE_OPTION, type RunCommand } from "./command.js";
import { shownName } from "../text/format.js";
import { resolveAgent, withDatabase } from "./scope.js";

export const runKill: RunCommand = async (args, io) => {
  const { values, positionals } = parseCommandLine("kill", ["AGENT"], args, TREE_OPTION);
  await withDatabase(io.env, async (db) => {
    const agent = await resolveAgent(db, positionals[0]!, values.tree);
    const killed = await killAgent(db, { targetId: agent.id, byAgentId: null });
    const others = killed.length - 1;
    const more = others > 0 ? ` and ${others} descendant${others === 1 ? "" : "s"}` : "";
    io.out(`killed ${shownName(agent)}${more}`);
  });
};
