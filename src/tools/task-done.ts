// task_done {task_id, result, failed?}: the caller finishes a task it claimed (SPEC §3). Recorded
// with the call's keyed, fenced result (effects.ts): done once, and never by a stale worker.
import { finishTask } from "../tasks/board.js";
import { resultStamp } from "./effects.js";
import type { AgentToolContext } from "./agent-context.js";
import { checkedTool } from "./args.js";
import { commitTaskWrite } from "./task-write.js";

const parameters = {
  type: "object",
  properties: {
    task_id: { type: "string", minLength: 1, description: "The task_id from task_claim." },
    result: {
      type: "string",
      description: "What was done (or why it failed), at most 64 KiB.",
    },
    failed: { type: "boolean", description: "true if the task could not be done." },
  },
  required: ["task_id", "result"],
  additionalProperties: false,
};

interface TaskDoneArgs {
  task_id: string;
  result: string;
  failed?: boolean;
}

export const taskDoneTool = checkedTool<TaskDoneArgs, AgentToolContext>({
  name: "task_done",
  description:
    "Finish a task you claimed with task_claim: its result goes to the tasks that depend on " +
    "it. With failed: true the task fails and the tasks depending on it are blocked.",
  parameters,
  async run(args, ctx) {
    const taskId = args.task_id.trim();
    const failed = args.failed === true;
    const result = args.result;
    return commitTaskWrite(ctx, "task_done", { result }, async (tx) => {
      const state = await finishTask(tx, {
        treeId: ctx.agent.tree_id,
        agentId: ctx.agent.id,
        taskId,
        result,
        failed,
        key: `${ctx.agent.id}:${resultStamp(ctx).key}`,
      });
      return { task_id: taskId, state };
    });
  },
});
