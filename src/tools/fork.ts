// fork {name, prompt, profile?, context?, budget?, isolation?} → {agent_id, name, worktree?,
// branch?}: creates a running child (with `isolation: "worktree"`, in a git worktree of its own).
import type { Budget } from "../agents/agents.sql.js";
import { forkCall } from "../agents/fork-batch.js";
import { commitOnce, resultStamp } from "./effects.js";
import { fail } from "./tool.js";
import { isLeaseLost } from "../agents/errors.js";
import { failure, type AgentToolContext } from "./agent-context.js";
import { compileOutputSchema, NOT_BLANK, checkedTool } from "./args.js";
import { isolatedFork, type Isolated } from "./fork-worktree.js";

const BUDGET_KEYS = ["turns", "tool_calls", "tokens", "wall_seconds"] as const;

interface ForkArgs {
  name: string;
  prompt: string;
  profile?: string;
  context?: "inherit" | "fresh";
  budget?: Budget;
  isolation?: "worktree";
  output_schema?: Record<string, unknown>;
}

const parameters = {
  type: "object",
  properties: {
    name: {
      type: "string",
      minLength: 1,
      maxLength: 64,
      pattern: NOT_BLANK,
      description: 'Short unique name for the child, e.g. "tests". Use it to refer to the child.',
    },
    prompt: {
      type: "string",
      minLength: 1,
      pattern: NOT_BLANK,
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
      properties: Object.fromEntries(BUDGET_KEYS.map((k) => [k, { type: "integer", minimum: 1 }])),
      additionalProperties: false,
    },
    isolation: {
      type: "string",
      enum: ["worktree"],
      description:
        '"worktree": the child works in its own git worktree on a new branch from your HEAD ' +
        "(its changes stay apart until merged).",
    },
    output_schema: {
      type: "object",
      description:
        "A JSON Schema the child's result must match (optional): its mail to you is then one " +
        'JSON value valid against it, and your wait entry carries it parsed as "result".',
    },
  },
  required: ["name", "prompt"],
  additionalProperties: false,
};

export const forkTool = checkedTool<ForkArgs, AgentToolContext>({
  name: "fork",
  description:
    "Start a child agent that works on `prompt` while you go on. It sends its result to you by " +
    'mail; collect it with wait (from_agents: ["NAME"]). With context "inherit" (default) the ' +
    'child also sees your conversation so far; with "fresh" only the prompt. Returns the ' +
    "child's name and agent_id.",
  parameters,
  async run(args, ctx) {
    const { name, prompt, profile, context, budget, isolation } = args;
    // Checked now, so a schema ajv cannot compile is the fork's error, not the child's.
    const outputSchema = args.output_schema;
    if (outputSchema !== undefined) {
      const compiled = compileOutputSchema(outputSchema);
      if (!compiled.ok) return fail("INVALID_ARGS", `/output_schema: ${compiled.error}`);
    }
    const chosen = typeof profile === "string" ? ctx.profiles[profile] : undefined;
    if (typeof profile === "string" && !chosen) {
      const known = Object.keys(ctx.profiles);
      return fail(
        "INVALID_ARGS",
        `unknown profile "${profile}"${known.length ? `; known: ${known.join(", ")}` : " (none configured)"}`,
      );
    }
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
        const granted = await ctx.forkCapabilities({ profile: chosen, budget: budget ?? {} });
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
            // A child of the fork tool reports to its parent (its final text is mailed there:
            // mail/final-answer.ts), in the shape of its output schema when it has one.
            caps: {
              ...granted.caps,
              reports: true,
              // The fork's own schema wins over its profile's (agent file or config).
              ...(outputSchema || chosen?.output_schema
                ? { output_schema: outputSchema ?? chosen?.output_schema }
                : {}),
            },
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
});
