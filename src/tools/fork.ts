// fork {name, prompt, profile?, context?, budget?, isolation?} → {agent_id, name, worktree?,
// branch?}: creates a running child (with `isolation: "worktree"`, in a git worktree of its own).
import type { Budget } from "../agents/agents.sql.js";
import { forkCall } from "../agents/fork-batch.js";
import { commitOnce, resultStamp } from "./effects.js";
import { fail, type Tool } from "./tool.js";
import { isLeaseLost } from "../agents/errors.js";
import { failure, isObject, unknownKey, type AgentToolContext } from "./agent-context.js";
import { isolatedFork, type Isolated } from "./fork-worktree.js";

const BUDGET_KEYS = ["turns", "tool_calls", "tokens", "wall_seconds"] as const;

export const forkTool: Tool<AgentToolContext> = {
  name: "fork",
  description:
    "Start a child agent that works on `prompt` while you go on. It sends its result to you by " +
    'mail; collect it with wait (from_agents: ["NAME"]). With context "inherit" (default) the ' +
    'child also sees your conversation so far; with "fresh" only the prompt. Returns the ' +
    "child's name and agent_id.",
  parameters: {
    type: "object",
    properties: {
      name: {
        type: "string",
        minLength: 1,
        maxLength: 64,
        description: 'Short unique name for the child, e.g. "tests". Use it to refer to the child.',
      },
      prompt: {
        type: "string",
        minLength: 1,
        description: "The child's task: complete, and saying what result to send back.",
      },
      profile: { type: "string", description: "A profile name from the configuration (optional)." },
      context: {
        type: "string",
        enum: ["inherit", "fresh"],
        description: '"inherit" (default): the child sees your conversation; "fresh": only prompt.',
      },
      budget: {
        type: "object",
        description: "Limits for the child (optional).",
        properties: Object.fromEntries(
          BUDGET_KEYS.map((k) => [k, { type: "integer", minimum: 1 }]),
        ),
        additionalProperties: false,
      },
      isolation: {
        type: "string",
        enum: ["worktree"],
        description:
          '"worktree": the child works in its own git worktree on a new branch from your HEAD ' +
          "(its changes stay apart until merged).",
      },
    },
    required: ["name", "prompt"],
    additionalProperties: false,
  },
  async run(args, ctx) {
    if (!isObject(args)) return fail("INVALID_ARGS", "arguments must be a JSON object");
    const bad = unknownKey(args, ["name", "prompt", "profile", "context", "budget", "isolation"]);
    if (bad) return bad;
    const { name, prompt, profile, context, budget, isolation } = args;
    if (isolation !== undefined && isolation !== null && isolation !== "worktree") {
      return fail("INVALID_ARGS", '"isolation" must be "worktree"');
    }
    if (typeof name !== "string" || !name.trim()) {
      return fail("INVALID_ARGS", '"name" must be a non-empty string');
    }
    if (typeof prompt !== "string" || !prompt.trim()) {
      return fail("INVALID_ARGS", '"prompt" must be a non-empty string');
    }
    if (context !== undefined && context !== null && context !== "inherit" && context !== "fresh") {
      return fail("INVALID_ARGS", '"context" must be "inherit" or "fresh"');
    }
    if (profile !== undefined && profile !== null && typeof profile !== "string") {
      return fail("INVALID_ARGS", '"profile" must be a string');
    }
    const chosen = typeof profile === "string" ? ctx.profiles[profile] : undefined;
    if (typeof profile === "string" && !chosen) {
      const known = Object.keys(ctx.profiles);
      return fail(
        "INVALID_ARGS",
        `unknown profile "${profile}"${known.length ? `; known: ${known.join(", ")}` : " (none configured)"}`,
      );
    }
    const parsedBudget = parseBudget(budget);
    if (typeof parsedBudget === "string") return fail("INVALID_ARGS", parsedBudget);
    let isolated: Isolated | undefined;
    if (isolation === "worktree" || chosen?.isolation === "worktree") {
      try {
        isolated = await isolatedFork(ctx, name);
      } catch (err) {
        return failure(err);
      }
    }
    try {
      // The child and this call's result commit together, in one statement that locks the root
      // first and is fenced by the lease (effects.ts), with the response's other forks
      // (fork-batch.ts): one transaction, one round trip for them all.
      const outcome = await commitOnce(ctx, async () => {
        // Never wider than this agent's own (agents/capabilities.ts): tools, file access, sandbox,
        // policy, a budget capped by what this agent has left. Inside the attempt: a replay whose
        // budget is now spent finds its recorded result (commitOnce) instead of a refusal.
        const granted = await ctx.forkCapabilities({ profile: chosen, budget: parsedBudget });
        const result = await forkCall(
          ctx.db,
          ctx.agent.id,
          {
            leaseOwner: ctx.fence?.owner,
            treeId: ctx.agent.tree_id,
            name,
            prompt,
            context: context === "fresh" ? "fresh" : "inherit",
            inheritUntilEvent: ctx.assistantEventId,
            profile: typeof profile === "string" ? profile : null,
            // Its profile's base prompt, if any (identity is added when a request is built).
            systemPrompt: chosen?.system_prompt ?? null,
            // No model of its own (or Claude Code's `inherit`, an alias without an entry): its
            // parent's (config/model-aliases.ts).
            model: chosen?.model ?? ctx.agent.model ?? null,
            ...granted,
            ...(isolated
              ? { id: isolated.id, worktree: isolated.worktree, cwd: isolated.worktree.path }
              : {}),
          },
          ctx.limits,
          resultStamp(ctx),
        );
        return {
          ok: true as const,
          value: JSON.parse(result.content) as unknown,
          recordedEventId: result.eventId,
        };
      });
      // A refused fork (a twin name, a limit) leaves no worktree behind.
      if (!outcome.ok && isolated) await isolated.undo();
      return outcome;
    } catch (err) {
      // Refused (not a lost lease: a newer holder of this call may be making the same worktree).
      if (isolated && !isLeaseLost(err)) await isolated.undo();
      return failure(err);
    }
  },
};

function parseBudget(budget: unknown): Budget | string {
  if (budget === undefined || budget === null) return {};
  if (!isObject(budget)) return '"budget" must be an object';
  const out: Budget = {};
  for (const [key, value] of Object.entries(budget)) {
    if (!(BUDGET_KEYS as readonly string[]).includes(key)) {
      return `unknown budget field "${key}"; expected: ${BUDGET_KEYS.join(", ")}`;
    }
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
      return `budget.${key} must be a positive integer`;
    }
    out[key as keyof Budget] = value;
  }
  return out;
}
