// kill {agent_id} → {killed: [ids]}: the target first, then every descendant. Own descendants only.
import { resolveAgentRef } from "../agents/refs.js";
import { killAgentIn } from "../agents/tree.js";
import { commitEffect } from "./effects.js";
import { failure, type AgentToolContext } from "./agent-context.js";
import { checkedTool } from "./args.js";

const parameters = {
  type: "object",
  properties: {
    agent_id: {
      type: "string",
      minLength: 1,
      description: "The agent to kill: its name (or id, if names clash).",
    },
  },
  required: ["agent_id"],
  additionalProperties: false,
};

export const killTool = checkedTool<{ agent_id: string }, AgentToolContext>({
  name: "kill",
  description:
    "Stop one of your descendants (children, their children, …) and everything below it, at " +
    "once. Returns the ids of the agents killed.",
  parameters,
  async run(args, ctx) {
    const ref = args.agent_id;
    try {
      // The cascade and this call's result commit together, fenced by the lease (effects.ts).
      return await commitEffect(ctx, "kill", async (tx) => {
        const scope = {
          treeId: ctx.agent.tree_id,
          selfId: ctx.agent.id,
          parentId: ctx.agent.parent_id,
        };
        const target = await resolveAgentRef(tx, scope, ref);
        const killed = await killAgentIn(tx, {
          targetId: target.id,
          byAgentId: ctx.agent.id,
          leaseOwner: ctx.fence?.owner,
        });
        return { killed };
      });
    } catch (err) {
      return failure(err);
    }
  },
});
