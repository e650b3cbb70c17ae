// task_add {title, detail?, depends_on?} → {task_id}: a task on the tree's board (SPEC §3). Added
// with the call's keyed, fenced result (effects.ts): a replayed call adds nothing more.
import { addTask } from "../tasks/board.js";
import type { AgentToolContext } from "./agent-context.js";
import { NOT_BLANK, checkedTool } from "./args.js";
import { commitTaskWrite } from "./task-write.js";

/** Bound of a task's title (its detail's: TASK_TEXT_MAX). */
export const TASK_TITLE_MAX = 500;

const parameters = {
  type: "object",
  properties: {
    title: {
      type: "string",
      minLength: 1,
      maxLength: TASK_TITLE_MAX,
      pattern: NOT_BLANK,
      description: "What to do, in one line.",
    },
    detail: {
      type: "string",
      description: "Everything the claimer needs to know (at most 64 KiB).",
    },
    depends_on: {
      type: "array",
      items: { type: "string", minLength: 1 },
      description: "task_ids (from task_add) that must be done first.",
    },
  },
  required: ["title"],
  additionalProperties: false,
};

interface TaskAddArgs {
  title: string;
  detail?: string;
  depends_on?: string[];
}

export const taskAddTool = checkedTool<TaskAddArgs, AgentToolContext>({
  name: "task_add",
  description:
    "Add a task to your tree's shared task board. Any agent of the tree can claim it with " +
    "task_claim once every task in depends_on is done; the claimer gets those tasks' results.",
  parameters,
  async run(args, ctx) {
    const title = args.title.trim();
    const detail = args.detail ?? null;
    const deps = args.depends_on ?? [];
    return commitTaskWrite(ctx, "task_add", { detail }, async (tx) => {
      const taskId = await addTask(tx, {
        treeId: ctx.agent.tree_id,
        createdBy: ctx.agent.id,
        title,
        detail,
        dependsOn: deps.map((d) => d.trim()),
      });
      return { task_id: taskId };
    });
  },
});
