// `warren stop AGENT`: interrupts an agent and its whole subtree, as /stop does in the TUI. Model
// streams and tools stop; every agent stays alive and takes mail afterwards (`warren kill` ends them).
import { interruptSubtree } from "../runtime/interrupt.js";
import { CliError, expectPositionals, parseCommandArgs, type Command } from "./command.js";
import { shownName } from "../text/format.js";
import { resolveAgent, withDatabase } from "./scope.js";

export const stop: Command = {
  name: "stop",
  summary: "interrupt an agent and all its descendants (they stay alive)",
  usage: `Usage: warren stop AGENT [--tree ID]

Interrupt the turns of an agent and every descendant: their model streams and tools stop,
each records that it was interrupted, and all stay alive (idle), taking mail afterwards.
Agents with no turn running are left as they are. To end agents, use \`warren kill\`.
AGENT is resolved as for \`warren log\`.

Options:
  --tree ID   resolve AGENT within this tree (a root's id or a unique prefix of it)
  -h, --help  show this help`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs("stop", {
      args,
      allowPositionals: true,
      options: { tree: { type: "string" } },
    });
    expectPositionals(positionals, "stop", { required: ["AGENT"] });
    await withDatabase(io.env, async (db) => {
      const agent = await resolveAgent(db, positionals[0]!, values.tree);
      if (agent.state === "dead")
        throw new CliError(`${shownName(agent)} is dead: nothing to stop`);
      const n = (await interruptSubtree(db, agent.id)).length;
      io.out(`stopped ${n} agent${n === 1 ? "" : "s"} (${shownName(agent)} and its descendants)`);
    });
  },
};
