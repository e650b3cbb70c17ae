// send {to, message} → {status: "sent", to, to_name, mail_id}: mail to any living agent of the same tree.
import { resolveAgentRef } from "../agents/refs.js";
import { AgentError } from "../agents/errors.js";
import { sendMailIn } from "../mail/send-fenced.js";
import { commitOnce, resultStamp } from "./effects.js";
import { failure, type AgentToolContext } from "./agent-context.js";
import { checkResult, checkedTool } from "./args.js";
import { traceparentFor } from "../telemetry/spans.js";

const parameters = {
  type: "object",
  properties: {
    to: {
      type: "string",
      minLength: 1,
      description: 'Recipient: "parent", or an agent\'s name (or id, if names clash).',
    },
    message: {
      type: "string",
      minLength: 1,
      description: "The complete message (at most 64 KiB).",
    },
    final: {
      type: "boolean",
      description:
        "true: this is your final result; your turn ends right after the send (no further " +
        "reply needed).",
    },
  },
  required: ["to", "message"],
  additionalProperties: false,
};

interface SendArgs {
  to: string;
  message: string;
  final?: boolean;
}

export const sendTool = checkedTool<SendArgs, AgentToolContext>({
  name: "send",
  description:
    'Mail a message to another agent of your tree, by name (or "parent"). An idle recipient ' +
    "wakes up with it; a busy one gets it when it calls wait or ends its turn.",
  parameters,
  async run(args, ctx) {
    const { to, message, final } = args;
    try {
      // "parent" and ids need no read: the statement checks the recipient's tree and state.
      const toId =
        to.trim() === "parent"
          ? parentOf(ctx)
          : (
              await resolveAgentRef(
                ctx.db,
                { treeId: ctx.agent.tree_id, selfId: ctx.agent.id, parentId: ctx.agent.parent_id },
                to,
              )
            ).id;
      if (toId === ctx.agent.id) {
        throw new AgentError("INVALID_ARGS", "you cannot send mail to yourself");
      }
      // A child with an output schema mails its parent one JSON value valid against it; refused
      // here, it repairs the result in its own turn.
      const schema = ctx.agent.output_schema;
      const toParent = toId === ctx.agent.parent_id;
      let result: { value: unknown } | undefined;
      if (schema && toParent) {
        const check = checkResult(schema, message);
        if (!check.ok) {
          throw new AgentError(
            "INVALID_ARGS",
            `/message does not match your output_schema: ${check.error}`,
          );
        }
        result = { value: check.value };
      }
      // The mail and this call's result commit in one statement (effects.ts).
      return await commitOnce(ctx, async () => {
        const receipt = await sendMailIn(
          ctx.db,
          {
            treeId: ctx.agent.tree_id,
            fromId: ctx.agent.id,
            toId,
            body: message,
            maxBytes: ctx.limits.maxMessageBytes,
            leaseOwner: ctx.fence?.owner,
            // The parent's wait reports a final answer and its parsed value (mail/wait.ts).
            final: final === true && toParent,
            ...(result ? { result } : {}),
            // Telemetry on: the receiver's span that takes this mail in links to this call's.
            traceContext: traceparentFor(ctx.agent.id, ctx.toolCallId),
          },
          resultStamp(ctx),
        );
        return {
          ok: true as const,
          value: JSON.parse(receipt.content!) as unknown,
          recordedEventId: receipt.eventId,
        };
      });
    } catch (err) {
      return failure(err);
    }
  },
});

function parentOf(ctx: AgentToolContext): string {
  if (!ctx.agent.parent_id) throw new AgentError("UNKNOWN_AGENT", "the root agent has no parent");
  return ctx.agent.parent_id;
}
