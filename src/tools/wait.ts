// wait {timeout, from_agents?}: the oldest mail, or fan-in over several agents. The result is
// recorded by waitForMail itself, in the same statement/transaction that consumes the mail.
import { eventKey } from "../agents/event-keys.js";
import { resolveAgentRefs } from "../agents/refs.js";
import { withRetry } from "../db/retry.js";
import { outage } from "../db/warning.js";
import { waitForMail } from "../mail/wait.js";
import { mailTraces } from "../mail/trace-links.js";
import { linkToolToMail, telemetryOn } from "../telemetry/spans.js";
import { fail } from "./tool.js";
import { failure, type AgentToolContext } from "./agent-context.js";
import { waitTimeout, checkedTool } from "./args.js";

const parameters = {
  type: "object",
  properties: {
    timeout: waitTimeout("Seconds to wait, 0 to 3600 (0 = just check)."),
    from_agents: {
      type: "array",
      items: { type: "string", minLength: 1 },
      minItems: 1,
      description: 'Names of the agents to collect one message each from, e.g. ["tests"].',
    },
  },
  required: ["timeout"],
  additionalProperties: false,
};

interface WaitArgs {
  timeout: number;
  from_agents?: string[];
}

export const waitTool = checkedTool<WaitArgs, AgentToolContext>({
  name: "wait",
  description:
    "Wait for mail. Without from_agents: returns the oldest message from anyone, or " +
    '{"status":"timeout"}. With from_agents: returns one entry per listed agent, each ' +
    '"received" (with its message), "idle" (it ended its turn without sending), "failed" (its ' +
    'model requests failed for good; "error" says why), "dead" or "running" (still working at ' +
    "the timeout); it returns as soon as none is running. Mail that is a child's final answer " +
    'carries "final": true, and "result" (the parsed value) when the child has an output_schema.',
  parameters,
  async run(args, ctx) {
    const { timeout, from_agents: from } = args;
    // The configured ceiling is a limit, not a shape: LIMIT_EXCEEDED, not INVALID_ARGS.
    if (timeout > ctx.limits.maxWaitSeconds) {
      return fail(
        "LIMIT_EXCEEDED",
        `"timeout" may be at most ${ctx.limits.maxWaitSeconds} seconds`,
      );
    }
    // A database blip does not end the wait: it is retried with the time it has left (a wait
    // consumes mail and records its result in one statement, so a failed attempt took nothing).
    const started = Date.now();
    const retry = {
      signal: ctx.signal,
      onRetry: (err: unknown) => ctx.onWarning?.(outage(err)),
    };
    try {
      const scope = {
        treeId: ctx.agent.tree_id,
        selfId: ctx.agent.id,
        parentId: ctx.agent.parent_id,
      };
      let fromAgents: string[] | undefined;
      if (Array.isArray(from)) {
        // One read for all of them, however many agents the fan-in names.
        const resolved = await withRetry(() => resolveAgentRefs(ctx.db, scope, from), retry);
        if (resolved.some((a) => a.id === ctx.agent.id)) {
          return fail("INVALID_ARGS", "you cannot wait for yourself");
        }
        fromAgents = resolved.map((a) => a.id);
      }
      if (timeout > 0) await ctx.setWaiting(true);
      try {
        const left = () => Math.max(0, timeout - (Date.now() - started) / 1000);
        // Keyed by the call: a retry after a commit whose reply was lost returns what that
        // attempt took (replay), and the database refuses a second result for the call.
        const outcome = await withRetry(
          (attempt) =>
            waitForMail(ctx.db, ctx.bus, {
              agentId: ctx.agent.id,
              timeoutSeconds: left(),
              fromAgents,
              signal: ctx.signal,
              record: {
                kind: "tool_result",
                data: { tool_call_id: ctx.toolCallId, name: "wait" },
                key: eventKey.toolResult(ctx.assistantEventId, ctx.toolCallId),
              },
              replay: attempt > 1,
              onProgress: ctx.onWaitProgress,
              storeStatus: ctx.onWaitProgress !== undefined,
              onBlock: ctx.onBlocked,
              fence: ctx.fence,
            }),
          retry,
        );
        if (telemetryOn()) await linkSenders(ctx, outcome.consumedMailIds);
        return { ok: true, value: outcome.result, recordedEventId: outcome.eventId };
      } finally {
        if (timeout > 0 && !ctx.signal.aborted) await ctx.setWaiting(false);
      }
    } catch (err) {
      if (err instanceof Error && err.name === "AbortError") throw err;
      return failure(err);
    }
  },
});

/**
 * Telemetry on: this call's span links to the spans that sent the mail it took (span links), one
 * read of those rows. It is only telemetry: a failed read leaves the links out, not the wait.
 */
async function linkSenders(ctx: AgentToolContext, mailIds: number[]): Promise<void> {
  const traces = await mailTraces(ctx.db, mailIds).catch(() => []);
  linkToolToMail(ctx.toolCallId, traces);
}
