// task_list {} → {tasks: [{task_id, title, state, claimed_by, result, depends_on}]}: the tree's
// board, oldest first; a pending task behind a failed one shows as "blocked" (SPEC §3).
import { withRetry } from "../db/retry.js";
import { outage } from "../db/warning.js";
import { listTasks } from "../tasks/board.js";
import { fail, type Tool } from "./tool.js";
import { failure, isObject, unknownKey, type AgentToolContext } from "./agent-context.js";

export const taskListTool: Tool<AgentToolContext> = {
  name: "task_list",
  description:
    "Show your tree's task board: every task with its state (pending, claimed, done, failed, " +
    "or blocked behind a failed one), who holds it, its result and its dependencies.",
  parameters: { type: "object", properties: {}, additionalProperties: false },
  async run(args, ctx) {
    if (args !== undefined && args !== null && !isObject(args)) {
      return fail("INVALID_ARGS", "arguments must be a JSON object");
    }
    const bad = isObject(args) ? unknownKey(args, []) : undefined;
    if (bad) return bad;
    try {
      const tasks = await withRetry(() => listTasks(ctx.db, ctx.agent.tree_id), {
        signal: ctx.signal,
        onRetry: (err) => ctx.onWarning?.(outage(err)),
      });
      return {
        ok: true,
        value: {
          tasks: tasks.map((t) => ({
            task_id: t.task_id,
            title: t.title,
            state: t.state,
            claimed_by: t.claimed_by,
            result: t.result,
            depends_on: t.depends_on,
          })),
        },
      };
    } catch (err) {
      return failure(err);
    }
  },
};
