// task_list {} → {tasks: [{task_id, title, state, claimed_by, result, depends_on}]}: the tree's
// board, oldest first; a pending task behind a failed one shows as "blocked" (SPEC §3).
import { withRetry } from "../db/retry.js";
import { outage } from "../db/warning.js";
import { listTasks } from "../tasks/board.js";
import type { Tool } from "./tool.js";
import { failure, type AgentToolContext } from "./agent-context.js";
import { checkArgs } from "./args.js";

const parameters = { type: "object", properties: {}, additionalProperties: false };

export const taskListTool: Tool<AgentToolContext> = {
  name: "task_list",
  description:
    "Show your tree's task board: every task with its state (pending, claimed, done, failed, " +
    "or blocked behind a failed one), who holds it, its result and its dependencies.",
  parameters,
  async run(args, ctx) {
    const checked = checkArgs(parameters, args ?? {});
    if (!checked.ok) return checked;
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
