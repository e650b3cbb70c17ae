// Executes every tool call of one model response: independent calls concurrently, `wait` calls
// after them (a wait may name a child forked in the same response), results in call order.
import type { AgentRow } from "../agents/agents.sql.js";
import { appendToolResult } from "../agents/events.js";
import { eventKey, isDuplicateKey } from "../agents/event-keys.js";
import { isLeaseLost } from "../agents/errors.js";
import { setState } from "../agents/tree.js";
import { getAgent } from "../agents/refs.js";
import { withRetry } from "../db/retry.js";
import { notice, outage } from "../db/warning.js";
import { capabilitiesOf, childCapabilities } from "../agents/capabilities.js";
import { shellSettingsOf } from "../config/config.js";
import { networkAsker } from "./network-asker.js";
import type { ToolCall } from "../llm/model.js";
import {
  createWaitStatusWriter,
  describeCall,
  setActivity,
  summarizeActivities,
  type WaitStatusWriter,
} from "../feed/publish.js";
import type { AgentToolContext } from "../tools/agent-context.js";
import type { AnyTool } from "../tools/registry.js";
import type { ToolRunDeps } from "./run-deps.js";
import { gateCall } from "./approval-gate.js";
import { hasHooks, postToolUse } from "./hook-calls.js";
import { CallAborts, raceAbort } from "./call-aborts.js";
import {
  endTool,
  noteTool,
  startTool,
  traceparentFor,
  withTraceparent,
} from "../telemetry/spans.js";
import {
  errorMessage,
  fail,
  internalFailure,
  outcomeText,
  type ToolOutcome,
} from "../tools/tool.js";

type Parsed = { ok: true; value: unknown } | { ok: false; message: string };

/** The agent's row as the response's answer left it, read once per response (counted). */
const countedRows = new WeakMap<ToolRunDeps, Promise<AgentRow>>();

/**
 * The agent's counters with this response counted: the turn's row predates the answer that
 * counted the turn and its tokens, and a fork's budget is capped by what is left after them.
 */
function counted(deps: ToolRunDeps): Promise<AgentRow> {
  let row = countedRows.get(deps);
  if (!row) {
    row = withRetry(() => getAgent(deps.db, deps.agent.id), retryOptions(deps)).then(
      (fresh) => fresh ?? deps.agent,
    );
    // A failed read is not kept: the next fork of the response asks again.
    row.catch(() => countedRows.delete(deps));
    countedRows.set(deps, row);
  }
  return row;
}

function parseArguments(text: string): Parsed {
  if (!text.trim()) return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, message: errorMessage(err) };
  }
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && err.name === "AbortError";
}

export interface ToolRunOptions {
  /** The activity line the answer's statement wrote already (firstActivity): not written again. */
  shownWithAnswer?: string | null;
}

/** Runs `calls`, whose `tool_call` lines were recorded with their answer (record-answer.ts). */
export async function runToolCalls(
  deps: ToolRunDeps,
  calls: ToolCall[],
  options: ToolRunOptions = {},
): Promise<void> {
  const { agent } = deps;
  const run: CallRun = {
    deps,
    running: new Map(),
    shown: undefined,
    version: 0,
    written: options.shownWithAnswer,
    used: agent.tool_calls,
    aborts: new CallAborts(deps.signal),
  };
  // A write refused for a stale epoch stops the turn's other calls (a long bash, say) at once.
  const runGuarded = (call: ToolCall) =>
    runOne(run, call).catch((err: unknown) => {
      if (isLeaseLost(err)) deps.onLeaseLost?.();
      throw err;
    });
  try {
    const settled = await Promise.allSettled(
      calls.filter((c) => c.name !== "wait").map(runGuarded),
    );
    const failed = settled.find((s) => s.status === "rejected");
    if (failed) throw failed.reason;
    for (const call of calls) if (call.name === "wait") await runGuarded(call);
  } finally {
    // No activity write lands after the turn goes on (and sets its own, "thinking").
    await run.shown;
  }
}

/**
 * What the calls of one response share. Module-level functions over this small record, not
 * closures over runToolCalls' scope: a `wait` blocked for an hour keeps only this alive.
 */
interface CallRun {
  deps: ToolRunDeps;
  /** The agent's `activity` names the calls running now (concurrent ones summarised), in order. */
  running: Map<string, string>;
  /** The activity write in flight, if any; it writes the newest line until none is newer. */
  shown: Promise<void> | undefined;
  /** Bumped by each change of the calls running; the writer writes until it has caught up. */
  version: number;
  /** The line written last (undefined: none yet; null: cleared). */
  written: string | null | undefined;
  /** Tool calls counted so far, against the agent's budget. */
  used: number;
  /** Each call's own abort signal, following the turn's (call-aborts.ts). */
  aborts: CallAborts;
}

function retryOptions(deps: ToolRunDeps) {
  return { signal: deps.signal, onRetry: (err: unknown) => deps.onWarning?.(outage(err)) };
}

/**
 * Shows the calls running now as the agent's activity, before a call runs: a tool that then sets
 * its own line (an approval request, a wait) is not overwritten by this one. One write at a time,
 * and the write in flight goes on to write the newest line once if the calls changed meanwhile:
 * every caller waits for a write that includes its call, so a response of 100 forks writes two
 * or three lines instead of 100 one after another on the agent's row.
 */
function showActivity(run: CallRun): Promise<void> {
  run.version++;
  run.shown ??= writeActivity(run);
  return run.shown;
}

const activityOf = (run: CallRun) => summarizeActivities([...run.running.values()]);

/**
 * The first line runToolCalls shows for `calls`: every call but `wait` starts at once (runOne
 * adds each to `running` before its first await), and a response of waits only starts with the
 * first. The answer's statement writes it (record-answer.ts), saving a write per response.
 */
export function firstActivity(calls: ToolCall[]): string | null {
  const running = new Map<string, string>();
  const add = (call: ToolCall) => running.set(call.id, describeCall(call.name, call.arguments));
  calls.filter((c) => c.name !== "wait").forEach(add);
  const wait = calls.find((c) => c.name === "wait");
  if (running.size === 0 && wait) add(wait);
  return summarizeActivities([...running.values()]);
}

async function writeActivity(run: CallRun): Promise<void> {
  const { db, agent, fence } = run.deps;
  // Not synchronously: showActivity has set `shown` to this promise before the loop can end.
  await Promise.resolve();
  // Started by showActivity: a first write, then one more for each change while it ran.
  let written = run.version - 1;
  while (written !== run.version) {
    written = run.version;
    const text = activityOf(run);
    if (text === run.written) continue;
    // The activity line is cosmetic: a failed write (the database away) is dropped, never a
    // rejection left unhandled (which would end the worker thread).
    await setActivity(db, agent.id, text, fence).catch(() => undefined);
    run.written = text;
  }
  run.shown = undefined;
}

async function runOne(run: CallRun, call: ToolCall): Promise<void> {
  const { deps } = run;
  const budget = deps.agent.budget.tool_calls;
  const overBudget = budget !== undefined && run.used >= budget;
  run.used++;
  run.running.set(call.id, describeCall(call.name, call.arguments));
  await showActivity(run);
  const tool = deps.tools.find((t) => t.name === call.name);
  // The call's `execute_tool` span (telemetry/spans.ts; nothing when telemetry is off).
  startTool(deps.agent, call);
  let executed: Executed;
  try {
    executed = overBudget
      ? { outcome: fail("LIMIT_EXCEEDED", `tool call budget exhausted (${budget} calls)`) }
      : await execute(deps, tool, call, run.aborts);
  } catch (err) {
    endTool(call.id, { ok: false, error: { code: "STOPPED", message: errorMessage(err) } });
    throw err;
  }
  endTool(call.id, executed.outcome);
  const { outcome, feedback } = executed;
  run.running.delete(call.id);
  if (run.running.size > 0) void showActivity(run);
  // A tool that recorded its own result (an effect, a wait) counted the call with it.
  if (outcome.ok && outcome.recordedEventId !== undefined) return;
  // Retried on transient failures (the outcome is in hand); fenced by the epoch. Keyed: when
  // an earlier attempt committed but its reply was lost, the database refuses this one.
  await withRetry(
    () =>
      appendToolResult(
        deps.db,
        deps.agent.id,
        withFeedback(outcomeText(outcome), feedback),
        {
          tool_call_id: call.id,
          name: call.name,
          ...(outcome.ok ? {} : { code: outcome.error.code }),
        },
        {
          key: eventKey.toolResult(deps.assistantEventId, call.id),
          epoch: deps.fence?.epoch,
        },
        // See Tool.outside: a command's result is never lost to a database crash.
        { durable: tool?.outside === true },
      ).catch((err: unknown) => {
        if (!isDuplicateKey(err)) throw err;
      }),
    retryOptions(deps),
  );
}

/**
 * The result text with a PostToolUse hook's feedback beside it (`hook_feedback`), so the model
 * reads both in the one result that is recorded.
 */
function withFeedback(text: string, feedback: string | undefined): string {
  if (feedback === undefined) return text;
  const value: unknown = JSON.parse(text);
  const base =
    value && typeof value === "object" && !Array.isArray(value) ? value : { result: value };
  return JSON.stringify({ ...base, hook_feedback: feedback });
}

/** A call's outcome, and what its PostToolUse hooks told the model (exit 2), if anything. */
interface Executed {
  outcome: ToolOutcome;
  feedback?: string;
}

async function execute(
  deps: ToolRunDeps,
  tool: AnyTool | undefined,
  call: ToolCall,
  aborts: CallAborts,
): Promise<Executed> {
  if (!tool) {
    const names = deps.tools.map((t) => t.name).join(", ");
    return {
      outcome: fail("INVALID_ARGS", `unknown tool "${call.name}"; available tools: ${names}`),
    };
  }
  const args = parseArguments(call.arguments);
  if (!args.ok) {
    return {
      outcome: fail(
        "INVALID_ARGS",
        `arguments are not valid JSON (${args.message}); nothing was run`,
      ),
    };
  }
  const { db, agent, config } = deps;
  // Made on a fan-in's first progress: most calls never show a wait status.
  let waitStatus: WaitStatusWriter | undefined;
  // This call's own signal (aborted with the turn's); its listeners go when the call ends.
  const aborter = aborts.begin();
  const signal = aborter.signal;
  const caps = capabilitiesOf(config, agent);
  const traceparent = traceparentFor(agent.id, call.id);
  if (call.name === "bash") noteTool(call.id, { "warren.sandbox.mode": caps.sandbox });
  const ctx: AgentToolContext = {
    cwd: agent.cwd ?? process.cwd(),
    signal,
    // With telemetry on, its commands get TRACEPARENT: a traced program nests under this call.
    shell: withTraceparent(
      {
        ...shellSettingsOf(config, caps.sandbox, caps.network),
        // Under a network gate, an unlisted host is a question for a person (network-asker.ts).
        ...(Array.isArray(caps.network) && { networkAsk: networkAsker(deps) }),
      },
      traceparent,
    ),
    ...(traceparent !== undefined && { traceparent }),
    db,
    bus: deps.bus,
    agent,
    limits: config.limits,
    profiles: config.profiles,
    fileAccess: capabilitiesOf(config, agent).fileAccess,
    forkCapabilities: async (request) => childCapabilities(config, await counted(deps), request),
    assistantEventId: deps.assistantEventId,
    toolCallId: call.id,
    fence: deps.fence,
    onWarning: deps.onWarning,
    setWaiting: async (waiting) => {
      if (!waiting) await deps.slot?.reacquire(signal);
      await withRetry(() => setState(db, agent.id, waiting ? "waiting" : "running", deps.fence), {
        signal,
      });
    },
    onBlocked: () => deps.slot?.release(),
    onWaitProgress: (entries, stored) => {
      (waitStatus ??= createWaitStatusWriter(db, agent.id, deps.fence)).progress(entries, stored);
      deps.onWaitProgress?.(agent.id, entries);
    },
  };
  try {
    // Raced: a tool stuck anywhere (a hung read, a query) never outlives an interrupt or kill.
    const refused = await raceAbort(gateCall(deps, ctx, call, args.value), signal);
    if (refused) return { outcome: refused };
    const outcome = await raceAbort(tool.run(args.value, ctx), signal).finally(() =>
      waitStatus?.clear(),
    );
    if (deps.signal.aborted) throw deps.signal.reason;
    if (!hasHooks(config, "PostToolUse")) return { outcome };
    // Before the result is recorded (runOne), so its feedback goes in with it, once; a tool
    // that recorded its own result (wait, fork, send…) has no place for feedback left.
    const response: unknown = JSON.parse(outcomeText(outcome));
    const site = { db, config, agent, signal, fence: deps.fence, onWarning: deps.onWarning };
    const said = await raceAbort(postToolUse(site, call, args.value, response), signal);
    if (deps.signal.aborted) throw deps.signal.reason;
    if (said === undefined) return { outcome };
    if (outcome.ok && outcome.recordedEventId !== undefined) {
      deps.onWarning?.(
        notice(
          `${agent.name}: hook PostToolUse exited 2 after ${call.name}, whose result was recorded already; its feedback is not shown to the model`,
        ),
      );
      return { outcome };
    }
    return { outcome, feedback: said };
  } catch (err) {
    if (isAbort(err) || deps.signal.aborted || isLeaseLost(err)) throw err;
    return { outcome: internalFailure(err) };
  } finally {
    aborts.end(aborter);
  }
}
