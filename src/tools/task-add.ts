// task_add {title, detail?, depends_on?} → {task_id}: a task on the tree's board (SPEC §3). Added
// with the call's keyed, fenced result (effects.ts): a replayed call adds nothing more.
import { AgentError } from "../agents/errors.js";
import { validateText } from "../agents/text.js";
import { addTask } from "../tasks/board.js";
import { lockCaller } from "../tasks/board.js";
import { commitEffect } from "./effects.js";
import { fail, type Tool } from "./tool.js";
import { failure, isObject, unknownKey, type AgentToolContext } from "./agent-context.js";

/** Bounds of a task's texts (a result is a tool result the claimers of its dependants read). */
export const TASK_TITLE_MAX = 500;
export const TASK_TEXT_MAX = 65536;

export const taskAddTool: Tool<AgentToolContext> = {
  name: "task_add",
  description:
    "Add a task to your tree's shared task board. Any agent of the tree can claim it with " +
    "task_claim once every task in depends_on is done; the claimer gets those tasks' results.",
  parameters: {
    type: "object",
    properties: {
      title: {
        type: "string",
        minLength: 1,
        maxLength: TASK_TITLE_MAX,
        description: "What to do, in one line.",
      },
      detail: {
        type: "string",
        maxLength: TASK_TEXT_MAX,
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
  },
  async run(args, ctx) {
    if (!isObject(args)) return fail("INVALID_ARGS", "arguments must be a JSON object");
    const bad = unknownKey(args, ["title", "detail", "depends_on"]);
    if (bad) return bad;
    try {
      const title = validateText(args.title, '"title"').trim();
      if (!title) throw new AgentError("INVALID_ARGS", '"title" must not be empty');
      if (title.length > TASK_TITLE_MAX) {
        throw new AgentError("INVALID_ARGS", `"title" is longer than ${TASK_TITLE_MAX} characters`);
      }
      const detail =
        args.detail === undefined || args.detail === null
          ? null
          : validateText(args.detail, '"detail"');
      if (detail !== null && Buffer.byteLength(detail) > TASK_TEXT_MAX) {
        throw new AgentError("LIMIT_EXCEEDED", `"detail" is over ${TASK_TEXT_MAX} bytes`);
      }
      const deps = args.depends_on ?? [];
      if (!Array.isArray(deps) || deps.some((d) => typeof d !== "string")) {
        return fail("INVALID_ARGS", '"depends_on" must be an array of task_id strings');
      }
      return await commitEffect(ctx, "task_add", async (tx) => {
        await lockCaller(tx, ctx.agent.id, ctx.fence);
        const taskId = await addTask(tx, {
          treeId: ctx.agent.tree_id,
          createdBy: ctx.agent.id,
          title,
          detail,
          dependsOn: (deps as string[]).map((d) => d.trim()),
        });
        return { task_id: taskId };
      });
    } catch (err) {
      return failure(err);
    }
  },
};
