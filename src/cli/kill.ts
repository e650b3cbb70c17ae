// `warren kill AGENT`: kills an agent and its whole subtree, as the person (never the root).
import { killAgent } from "../agents/tree.js";
import { expectPositionals, parseCommandArgs, type Command } from "./command.js";
import { shownName } from "../text/format.js";
import { resolveAgent, withDatabase } from "./scope.js";

export const kill: Command = {
  name: "kill",
  summary: "kill an agent and all its descendants",
  usage: `Usage: warren kill AGENT [--tree ID]

Kill an agent and every descendant: their model streams and tools stop at once and
they stay visible (dead) until reaped. The root agent cannot be killed.
AGENT is resolved as for \`warren log\`.

Options:
  --tree ID   resolve AGENT within this tree (a root's id or a unique prefix of it)
  -h, --help  show this help`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs("kill", {
      args,
      allowPositionals: true,
      options: { tree: { type: "string" } },
    });
    expectPositionals(positionals, "kill", { required: ["AGENT"] });
    await withDatabase(io.env, async (db) => {
      const agent = await resolveAgent(db, positionals[0]!, values.tree);
      const killed = await killAgent(db, { targetId: agent.id, byAgentId: null });
      const others = killed.length - 1;
      const more = others > 0 ? ` and ${others} descendant${others === 1 ? "" : "s"}` : "";
      io.out(`killed ${shownName(agent)}${more}`);
    });
  },
};
