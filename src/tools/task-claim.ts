// task_claim {timeout?}: the oldest pending task of the tree whose dependencies are all done,
// claimed by the caller with its dependencies' results; {"status":"empty"} once nothing is open,
// {"status":"timeout"} when the time ran out first (SPEC §3). The claim commits in one statement
// with the call's keyed, fenced tool_result, so a retry after a lost reply finds the answer
// recorded and a stale worker claims nothing. Blocked, it sleeps like `wait`: registered so that
// the next add of a ready task hands it over (board.ts, ADD_TASK: the result comes in the NOTIFY
// on the tree's task channel), woken by that channel for any other change, a slow re-check
// covering a lost NOTIFY, its scheduler slot lent meanwhile; a claim in flight when its worker
// died is run again with its remaining time (runtime/resume.ts).
import { sql } from "drizzle-orm";
import { UNLISTENED_POLL_MS } from "../bus/bus.js";
import { parseHandedResult, type HandedResult } from "../mail/handoff.js";
import { RECHECK_MS } from "../mail/recheck.js";
import { WakeLoop } from "../bus/wake-loop.js";
import { claimTask, taskChannel } from "../tasks/board.js";
import { commitOnce, recordedResult, resultStamp } from "./effects.js";
import { fail, type ToolOutcome } from "./tool.js";
import { failure, type AgentToolContext } from "./agent-context.js";
import { waitTimeout, checkedTool } from "./args.js";

/** Seconds a claim waits when the call names no timeout. */
export const DEFAULT_CLAIM_TIMEOUT = 60;

const parameters = {
  type: "object",
  properties: {
    timeout: waitTimeout(
      `Seconds to wait for a task to become ready, 0 to 3600 (default ${DEFAULT_CLAIM_TIMEOUT}).`,
    ),
  },
  additionalProperties: false,
};

export const taskClaimTool = checkedTool<{ timeout?: number }, AgentToolContext>({
  name: "task_claim",
  description:
    "Claim the oldest task on your tree's board that is ready (every dependency done); you get " +
    'its detail and its dependencies\' results. Returns {"status":"empty"} when no task is ' +
    'pending or being worked on, {"status":"timeout"} if none became ready in time. Finish ' +
    "the task with task_done.",
  parameters,
  async run(args, ctx) {
    const timeout = args.timeout ?? DEFAULT_CLAIM_TIMEOUT;
    // The configured ceiling is a limit, not a shape: LIMIT_EXCEEDED, not INVALID_ARGS.
    if (timeout > ctx.limits.maxWaitSeconds) {
      return fail(
        "LIMIT_EXCEEDED",
        `"timeout" may be at most ${ctx.limits.maxWaitSeconds} seconds`,
      );
    }
    try {
      return await claimWhenReady(ctx, timeout);
    } catch (err) {
      if (err instanceof Error && err.name === "AbortError") throw err;
      return failure(err);
    }
  },
});

const NOT_YET: ToolOutcome = { ok: true, value: "not yet" };

/** How soon a claim that skipped a locked ready task looks again. */
const CONTENDED_RECHECK_MS = 200;

async function claimWhenReady(ctx: AgentToolContext, timeout: number): Promise<ToolOutcome> {
  const stamp = resultStamp(ctx);
  const loop = new WakeLoop();
  let handed: HandedResult | undefined;
  // The board's channel: a change (look again), or a task an add handed to a blocked claimer,
  // with that claim's result; one handed to another claimer changes nothing for this one.
  const onBoard = (payload: string) => {
    const note = parseHandedResult(payload);
    if (!note) loop.wake();
    else if (note.key === stamp.key) {
      handed = note;
      loop.interrupt();
    }
  };
  // Subscribed before the first look: a change committed after it wakes the sleep.
  const unsubscribe =
    timeout > 0 ? await ctx.bus.subscribe(taskChannel(ctx.agent.tree_id), onBoard) : () => {};
  let waiting = false;
  let registered = false;
  let contended = false;
  let settled = false;
  try {
    const outcome = await loop.run<ToolOutcome>({
      deadline: Date.now() + timeout * 1000,
      signal: ctx.signal,
      abortError,
      // A ready task skipped locked is looked at again soon: its claimer may roll back, and a
      // rollback sends no NOTIFY.
      recheckMs: () =>
        contended ? CONTENDED_RECHECK_MS : ctx.bus.listening() ? RECHECK_MS : UNLISTENED_POLL_MS,
      onBlock: async () => {
        // Nothing ready yet: shown as waiting, and the scheduler slot goes to others meanwhile.
        waiting = true;
        await ctx.setWaiting(true);
        ctx.onBlocked?.();
      },
      handed: async () => {
        if (!handed) return undefined;
        // Handed over (board.ts, ADD_TASK): the add recorded this call's result and claimed the
        // task for it; too large for the NOTIFY, it is read by its key.
        const given = handed;
        handed = undefined;
        return given.result !== undefined
          ? { ok: true, value: given.result, recordedEventId: given.event }
          : await recordedResult(ctx.db, ctx);
      },
      look: async (final) => {
        const register = timeout > 0 && !final;
        // One statement: the claim and the call's keyed, fenced result (or nothing yet).
        const outcome = await commitOnce(ctx, async (): Promise<ToolOutcome> => {
          const answer = await claimTask(ctx.db, {
            treeId: ctx.agent.tree_id,
            agentId: ctx.agent.id,
            fence: ctx.fence,
            resultKey: stamp.key,
            toolCallId: ctx.toolCallId,
            final,
            register,
          });
          contended = answer === "contended";
          if (!answer || answer === "contended") return NOT_YET;
          return { ok: true, value: JSON.parse(answer.content), recordedEventId: answer.eventId };
        });
        registered = register;
        return outcome === NOT_YET ? undefined : outcome;
      },
    });
    settled = true;
    return outcome;
  } finally {
    unsubscribe();
    // Left by an abort or an error: no add should hand a task to this call any more. If this
    // fails, the key still admits one result, and a takeover's lease never matches this one.
    if (registered && !settled) void unregister(ctx, stamp.key).catch(() => {});
    if (waiting && !ctx.signal.aborted) await ctx.setWaiting(false);
  }
}

async function unregister(ctx: AgentToolContext, key: string): Promise<void> {
  await ctx.db.execute(
    sql`update task_waits set key = null where agent_id = ${ctx.agent.id} and key = ${key}`,
  );
}

function abortError(): Error {
  const err = new Error("task_claim interrupted");
  err.name = "AbortError";
  return err;
}
