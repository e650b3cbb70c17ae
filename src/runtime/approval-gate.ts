// The tool policy in front of every call (SPEC §3): `allow` runs it, `deny` answers NOT_ALLOWED
// with why, `ask` runs it once a person allowed it — or at once under `--approve all`, or never
// under `--approve none`. A call waiting for its answer blocks like a `wait`: the agent shows as
// waiting, its scheduler slot is lent out, and a resumed turn finds the same request again.
import {
  awaitAnswer,
  markStarted,
  markStartedWithout,
  requestApproval,
  treeAllows,
  treeApproveMode,
} from "../approvals/approvals.js";
import { eventKey } from "../agents/event-keys.js";
import { decideCall, treePattern } from "../config/policy.js";
import { describeCall, setActivity } from "../feed/publish.js";
import type { ToolCall } from "../llm/model.js";
import type { AgentToolContext } from "../tools/agent-context.js";
import { fail, type ToolOutcome } from "../tools/tool.js";
import type { ToolRunDeps } from "./run-deps.js";

const SHOWN_MAX = 120;

function shown(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > SHOWN_MAX ? `${line.slice(0, SHOWN_MAX - 1)}…` : line;
}

/** Undefined: the call may run. Else the outcome that answers it instead. */
export async function gateCall(
  deps: ToolRunDeps,
  ctx: AgentToolContext,
  call: ToolCall,
  args: unknown,
): Promise<ToolOutcome | undefined> {
  const { db, agent } = deps;
  const { verdict, subject } = await decideCall(
    deps.config.policy,
    agent.policy ?? [],
    call.name,
    args,
    ctx.cwd,
  );
  if (verdict === "allow") return undefined;
  const what = subject ? `${call.name} (${shown(subject)})` : call.name;
  if (verdict === "deny") return fail("NOT_ALLOWED", `${what} is denied by the tool policy`);
  const mode = await treeApproveMode(db, agent.tree_id);
  if (mode === "none") {
    return fail(
      "NOT_ALLOWED",
      `${what} needs a person's approval, and this run answers no (--approve none)`,
    );
  }
  const asked = {
    treeId: agent.tree_id,
    agentId: agent.id,
    callKey: eventKey.toolResult(deps.assistantEventId, call.id),
    tool: call.name,
    subject,
    arguments: call.arguments,
    pattern: treePattern(call.name, subject),
  };
  // Let through without a person's answer: still marked started before it runs (issue 28), so
  // a crash after the start never runs it again (resume.ts runs only requests never started).
  const without =
    mode === "all"
      ? "--approve all"
      : (await treeAllows(db, agent.tree_id, call.name, subject))
        ? "a rule for the tree"
        : undefined;
  if (without !== undefined) {
    if (await markStartedWithout(db, asked, without)) return undefined;
    return fail("INTERNAL", `interrupted: ${what} may have run before its worker stopped`);
  }
  const request = await requestApproval(db, asked);
  let answer = request;
  if (request.status === "pending") {
    await ctx.setWaiting(true);
    await setActivity(
      db,
      agent.id,
      `? needs approval ${request.id}: ${describeCall(call.name, call.arguments)}`,
      deps.fence,
    );
    ctx.onBlocked?.();
    try {
      // The call's own signal (tool-calls.ts): one listener per call, removed when it ends.
      answer = await awaitAnswer(db, deps.bus, request, ctx.signal);
    } finally {
      if (!ctx.signal.aborted) await ctx.setWaiting(false);
    }
    await setActivity(db, agent.id, describeCall(call.name, call.arguments), deps.fence);
  }
  if (answer.status === "allowed") {
    // Once: a worker that resumed this turn after an earlier one had started the call says so.
    if (await markStarted(db, answer.id)) return undefined;
    return fail("INTERNAL", `interrupted: ${what} may have run before its worker stopped`);
  }
  const by = answer.answered_by ? ` by ${answer.answered_by}` : "";
  const why = answer.reason ? `: ${answer.reason}` : "";
  return fail(
    "NOT_ALLOWED",
    answer.status === "cancelled"
      ? `${what} was not approved (the request was withdrawn)`
      : `${what} was denied${by}${why}`,
  );
}
