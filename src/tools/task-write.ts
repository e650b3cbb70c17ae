// What task_add and task_done share: the byte bound of a task's texts, and a board write committed
// with the call's keyed, fenced result (effects.ts) once the caller's agent row is locked.
import { AgentError } from "../agents/errors.js";
import type { Queryable } from "../db/client.js";
import { lockCaller } from "../tasks/board.js";
import { failure, type AgentToolContext } from "./agent-context.js";
import { commitEffect } from "./effects.js";
import type { ToolOutcome } from "./tool.js";

/** Bound of a task's detail and result (a result is a tool result the claimers of its dependants read). */
export const TASK_TEXT_MAX = 65536;

/**
 * Refuses a text of `texts` (by argument name; null: not given) over TASK_TEXT_MAX bytes, then
 * commits `write` as the call's effect under lockCaller; any failure is the tool's error result.
 */
export async function commitTaskWrite(
  ctx: AgentToolContext,
  tool: string,
  texts: Record<string, string | null>,
  write: (tx: Queryable) => Promise<unknown>,
): Promise<ToolOutcome> {
  try {
    for (const [name, text] of Object.entries(texts)) {
      // Bytes, not characters: a limit the schema's maxLength cannot state.
      if (text !== null && Buffer.byteLength(text) > TASK_TEXT_MAX) {
        throw new AgentError("LIMIT_EXCEEDED", `"${name}" is over ${TASK_TEXT_MAX} bytes`);
      }
    }
    return await commitEffect(ctx, tool, async (tx) => {
      await lockCaller(tx, ctx.agent.id, ctx.fence);
      return write(tx);
    });
  } catch (err) {
    return failure(err);
  }
}
