// The tool policy in front of every call (SPEC §3): `allow` runs it, `deny` answers NOT_ALLOWED
// with why, `ask` runs it once a person allowed it — or at once under `--approve all`, or never
// under `--approve none`. A call waiting for its answer blocks like a `wait`: the agent shows as
// waiting, its scheduler slot is lent out, and a resumed turn finds the same request again.
// Between the policy and the person, the PreToolUse hooks (SPEC §9): they may block or make the
// verdict stricter, never wider (hooks/decision.ts combinePre).
import {
  awaitAnswer,
  markStarted,
  markStartedWithout,
  requestApproval,
  treeAllows,
  treeApproveMode,
} from "../approvals/approvals.js";
import { eventKey } from "../agents/event-keys.js";
import { decideCall } from "../policy/policy.js";
import { treePattern } from "../policy/tree-rules.js";
import { describeCall, setActivity } from "../feed/publish.js";
import type { ToolCall } from "../llm/model.js";
import type { AgentToolContext } from "../tools/agent-context.js";
import { fail, type ToolOutcome } from "../tools/tool.js";
import { guardedWriteTarget } from "./guarded-files.js";
import { hasHooks, notificationHooks, preToolUse, type HookSite } from "./hook-calls.js";
import type { ToolRunDeps } from "./run-deps.js";
import { noteTool, recordApprovalWait } from "../telemetry/spans.js";
import { skillRefusal } from "./skill-scope.js";

/** The call's decision on its `execute_tool` span: allow or deny, and who decided. */
function decided(call: ToolCall, decision: "allow" | "deny", by: string): void {
  noteTool(call.id, { "warren.approval.decision": decision, "warren.approval.by": by });
}

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
  const policy = await decideCall(
    deps.config.policy,
    agent.policy ?? [],
    call.name,
    args,
    ctx.cwd,
    deps.config.settingsRules,
  );
  // A write to an instruction or agent file is asked even where writes are allowed, answered
  // once each (no rule for the tree covers it): guarded-files.ts says why.
  const guarded = guardedWriteTarget(call.name, args, ctx.cwd) !== undefined;
  const verdict = guarded && policy.verdict === "allow" ? "ask" : policy.verdict;
  const { subject } = policy;
  const what = subject ? `${call.name} (${shown(subject)})` : call.name;
  if (verdict === "deny") decided(call, "deny", "policy");
  if (verdict === "deny") return fail("NOT_ALLOWED", `${what} is denied by the tool policy`);
  // A skill in use narrows what the policy allows or asks, never widens it.
  const narrowed = await skillRefusal(db, agent.id, ctx.cwd, call.name, args, what);
  if (narrowed) decided(call, "deny", "skill");
  if (narrowed) return narrowed;
  // Without PreToolUse hooks an allowed call goes at once, as it always did.
  if (verdict === "allow" && !hasHooks(deps.config, "PreToolUse")) {
    decided(call, "allow", "policy");
    return undefined;
  }
  const site: HookSite = {
    db,
    config: deps.config,
    agent,
    signal: ctx.signal,
    fence: deps.fence,
    onWarning: deps.onWarning,
  };
  const hooked = await preToolUse(site, call, args, verdict);
  if (hooked.kind !== "verdict") decided(call, "deny", "hook");
  if (hooked.kind === "blocked") {
    return fail("NOT_ALLOWED", `${what} was blocked by a PreToolUse hook: ${hooked.message}`);
  }
  if (hooked.kind === "denied") {
    const why = hooked.reason ? `: ${hooked.reason}` : "";
    return fail("NOT_ALLOWED", `${what} is denied by a PreToolUse hook${why}`);
  }
  if (hooked.verdict === "allow") {
    decided(call, "allow", hooked.byHook ? "hook" : "policy");
    return undefined;
  }
  const mode = await treeApproveMode(db, agent.tree_id);
  if (mode === "none") {
    decided(call, "deny", "--approve none");
    const by = hooked.byHook
      ? ` (a PreToolUse hook asks${hooked.reason ? `: ${hooked.reason}` : ""})`
      : guarded
        ? " (it writes an instruction or agent file, which later prompts would carry)"
        : "";
    return fail(
      "NOT_ALLOWED",
      `${what} needs a person's approval${by}, and this run answers no (--approve none)`,
    );
  }
  const asked = {
    treeId: agent.tree_id,
    agentId: agent.id,
    callKey: eventKey.toolResult(deps.assistantEventId, call.id),
    tool: call.name,
    subject,
    arguments: call.arguments,
    pattern: guarded ? "" : treePattern(call.name, subject),
  };
  // Let through without a person's answer: still marked started before it runs (issue 28), so
  // a crash after the start never runs it again (resume.ts runs only requests never started).
  const without =
    mode === "all"
      ? "--approve all"
      : !guarded && (await treeAllows(db, agent.tree_id, call.name, subject))
        ? "a rule for the tree"
        : undefined;
  if (without !== undefined) {
    decided(call, "allow", without);
    if (await markStartedWithout(db, asked, without)) return undefined;
    return fail("INTERNAL", `interrupted: ${what} may have run before its worker stopped`);
  }
  const request = await requestApproval(db, asked);
  let answer = request;
  if (request.status === "pending") {
    // Told while the call waits, not awaited: the person's answer never waits for the hook. It
    // follows the turn (killed on interrupt or shutdown) and its own timeout.
    void notificationHooks(
      { ...site, signal: deps.signal },
      "permission_prompt",
      `${agent.name} needs your approval for ${describeCall(call.name, call.arguments)} (request ${request.id})`,
    ).catch(() => undefined);
    await ctx.setWaiting(true);
    await setActivity(
      db,
      agent.id,
      `? needs approval ${request.id}: ${describeCall(call.name, call.arguments)}`,
      deps.fence,
    );
    ctx.onBlocked?.();
    const asking = performance.now();
    try {
      // The call's own signal (tool-calls.ts): one listener per call, removed when it ends.
      answer = await awaitAnswer(db, deps.bus, request, ctx.signal);
      recordApprovalWait(call.name, (performance.now() - asking) / 1000, answer.status);
    } finally {
      if (!ctx.signal.aborted) await ctx.setWaiting(false);
    }
    await setActivity(db, agent.id, describeCall(call.name, call.arguments), deps.fence);
  }
  decided(call, answer.status === "allowed" ? "allow" : "deny", answer.answered_by ?? "person");
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
