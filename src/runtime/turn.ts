// The turn loop of one agent. Stateless between steps: each step reads the transcript's tail and
// decides (call the model, run tools, take pending mail, or go idle), so a process that crashed
// mid-turn is resumed by whoever claims the agent next.
import type { AgentRow } from "../agents/agents.sql.js";
import { appendEvent, appendEventOnce, appendToolResultOnce } from "../agents/events.js";
import { eventKey } from "../agents/event-keys.js";
import { isLeaseLost, type Fence } from "../agents/errors.js";
import { getAgent } from "../agents/refs.js";
import { CONTEXT_KINDS, readPass, TURN_ENDERS, type PassRead } from "./pass-read.js";
import { modelProblem } from "../config/config.js";
import type { Db } from "../db/client.js";
import { ModelError } from "../llm/model.js";
import { isTransient, shownError, withRetry } from "../db/retry.js";
import { outage } from "../db/warning.js";
import { LeaseLost } from "./leases.js";
import { mcpToolsFor } from "../mcp/catalog.js";
import { toolsFor, withSkills, toolSpecs, type AnyTool } from "../tools/registry.js";
import { capabilitiesOf } from "../agents/capabilities.js";
import { createStreamPublisher, endStream, setActivity } from "../feed/publish.js";
import { estimateTokens } from "../llm/stream-assembly.js";
import type { EventRow } from "../agents/events.sql.js";
import { isPersonCall } from "./person-wait.js";
import { completeFitting, fitContext } from "./compaction.js";
import type { ConversationRead } from "./context.js";
import { findDanglingCalls, resumeDanglingCalls } from "./resume.js";
import { toolRunDeps, type TurnDeps } from "./run-deps.js";
import { recordAnswer, type AnswerEnd } from "./record-answer.js";
import { firstActivity, runToolCalls } from "./tool-calls.js";
import { recordChanges } from "../agents/worktree.js";
import { cancelPending } from "../approvals/approvals.js";
import type { ToolCall, Usage } from "../llm/model.js";
import type { Prices } from "../agents/cost.js";
import { budgetProblem, settleTurnEnd, takePendingMail } from "./turn-end.js";
import { spending } from "./spend.js";
import {
  hasHooks,
  notificationHooks,
  stopEventOf,
  stopHooks,
  type HookSite,
} from "./hook-calls.js";
import { withModelCap } from "./model-cap.js";
import { noticeFileChanges } from "./file-changes.js";
import {
  beginRootRun,
  endChat,
  endRun,
  failChat,
  startChat,
  traceparentFor,
} from "../telemetry/spans.js";
import { setRootTrace } from "../agents/root-trace.js";
import { agentCost } from "../agents/cost.js";
import { mailFinalAnswer } from "../mail/final-answer.js";
import { checkResult } from "../text/json-schema.js";
import { checkpointBeforeTurn } from "./checkpoint-turn.js";
import { latestTurnStart } from "../agents/rewind.js";

/** Why a running turn was stopped from outside. */
export type StopReason = "interrupt" | "dead" | "lease-lost" | "shutdown";

export class TurnStopped extends Error {
  constructor(readonly reason: StopReason) {
    super(`turn stopped: ${reason}`);
    this.name = "AbortError";
  }
}

function stopReason(signal: AbortSignal): StopReason | undefined {
  if (!signal.aborted) return undefined;
  return signal.reason instanceof TurnStopped ? signal.reason.reason : "shutdown";
}

/**
 * Runs `agentId` until it goes idle, dies, or is stopped through `signal` (abort it with a
 * TurnStopped). The caller holds the agent's lease.
 *
 * A transient database failure (a restart, a killed connection, a deadlock) never ends the turn:
 * the loop is stateless, so after a pause it starts over from the rows (for about a minute; then
 * it throws and the lease, given back or expired, lets a worker resume later). A response already
 * recorded is never requested again. A lost lease ends the run without another write.
 *
 * `abort`, when given, aborts `signal` (the caller's controller, the scheduler's): the turn then
 * runs on that signal, stopped through it when a write is refused, instead of on a signal of its
 * own following it (an AbortSignal and its listener are 1 KiB a waiting agent keeps).
 */
export async function runAgent(
  deps: TurnDeps,
  agentId: string,
  signal: AbortSignal,
  abort?: (reason: TurnStopped) => void,
): Promise<RunEnd> {
  // The turn's signal also aborts when one of its writes is refused for a stale epoch: a
  // worker that lost its lease abandons its model call and tools at once.
  const own = abort ? undefined : new AbortController();
  const turnSignal = own?.signal ?? signal;
  const follow = own && (() => own.abort(signal.reason));
  if (follow) {
    if (signal.aborted) follow();
    else signal.addEventListener("abort", follow, { once: true });
  }
  const lost = () => {
    if (!turnSignal.aborted) (abort ?? ((r) => own!.abort(r)))(new TurnStopped("lease-lost"));
  };
  // One literal, not a spread: a spread got a hidden class of its own per agent (held all turn).
  const inner: TurnDeps = {
    db: deps.db,
    bus: deps.bus,
    // Each request takes a slot of its server first when the config caps it (model-cap.ts).
    model: withModelCap(deps, agentId),
    config: deps.config,
    onWarning: deps.onWarning,
    fence: deps.fence,
    onLeaseLost: lost,
    onWaitProgress: deps.onWaitProgress,
    slot: deps.slot,
  };
  let end = "error";
  try {
    const ran = await withRetry(() => runAgentLoop(inner, agentId, turnSignal), {
      signal: turnSignal,
      onRetry: (err) => deps.onWarning?.(outage(err)),
    });
    end = ran === "idle" ? "idle" : (stopReason(turnSignal) ?? "other");
    return ran;
  } catch (err) {
    if (isLeaseLost(err) || stopReason(turnSignal) === "lease-lost") {
      end = "lease-lost";
      return "other";
    }
    throw err;
  } finally {
    if (follow) signal.removeEventListener("abort", follow);
    // The run's `invoke_agent` span, started by its first request or call (telemetry/spans.ts).
    endRun(agentId, end);
  }
}

/** How a run ended: "idle" gave the lease back with the agent's state; "other" may hold it. */
export type RunEnd = "idle" | "other";

async function runAgentLoop(deps: TurnDeps, agentId: string, signal: AbortSignal): Promise<RunEnd> {
  const { db } = deps;
  // First, calls left without a result (a crash, or the person's /wait): see resumeDanglingCalls.
  let resuming = true;
  // How this loop's last step ended: a turn its calls ended (`send {final: true}`) is over now.
  let stepped: StepEnd | undefined;
  // The turn under way (known when this loop started it) and the one whose checkpoint is taken.
  let turnStart: number | undefined;
  let checkpointed: number | undefined;
  /**
   * The turn's checkpoint, taken before its first call that may change files (not before its
   * first request: a turn that only reads, mails or forks costs nothing, which is what a fan-in's
   * children mostly are). A turn this process did not start is found in the rows (after a crash).
   */
  const beforeWrites = async (agent: AgentRow): Promise<void> => {
    const start = turnStart ?? (await latestTurnStart(db, agent.id));
    if (start === undefined || checkpointed === start) return;
    await checkpointBeforeTurn(deps, agent, start);
    checkpointed = start;
  };
  while (true) {
    // `let`, and let go before the step's tools run: an async function keeps every local it
    // declared while it awaits, dead or not, and a turn blocked in `wait` for an hour would keep
    // the pass's rows (the agent's whole conversation) with it.
    let read: PassRead | undefined = await readPass(db, agentId, resuming, deps.fence?.epoch);
    const agent = read?.agent;
    if (!read || !agent || agent.state === "dead") return "other";
    // Checked on every pass, so a worker back from an outage longer than its lease stops here
    // (its writes would be refused anyway: the epoch is checked by the database).
    if (deps.fence && !holds(agent, deps.fence)) throw new LeaseLost(agent.id);
    const reason = stopReason(signal) ?? (agent.interrupt_requested_at ? "interrupt" : undefined);
    if (reason) {
      await handleStop(deps, agent, reason);
      return "other";
    }
    if (resuming) {
      resuming = false;
      if (read.dangling) {
        const resume = async () => {
          await beforeWrites(agent);
          await resumeDanglingCalls(deps, agent, signal);
        };
        read = undefined;
        if (!(await guarded(deps, agent, signal, resume))) return "other";
        continue;
      }
    }

    // The events that decide the next step, read with the row.
    let tail: EventRow[] | undefined = read.tail;
    let last = decidingEvent(tail);
    if (!last || turnIsOver(tail, last)) {
      // The model has answered (or the person's /wait or an interrupt ended the turn): the turn
      // is over unless mail or input arrived meanwhile. A child's answer reaches its parent
      // first (keyed: resumed after a crash, it is mailed once).
      if (last?.kind === "assistant" && (await mailFinal(deps, agent, last)) === "reminded") {
        continue;
      }
      if (stepped === "called" && last?.kind === "tool_result") {
        stepped = undefined;
        await finalSendStopHooks(deps, agent, tail, signal);
      }
      if ((await takePendingMail(db, agent, deps.fence)) === "idle") return "idle";
      continue;
    }
    const startingTurn = last.kind === "user" || last.kind === "mail_in";
    if (startingTurn) turnStart = last.id;
    const spend = await spending(db, agent, deps.config);
    const budget = budgetProblem(agent, startingTurn, spend);
    const problem = budget ?? modelProblem(deps.config.model);
    if (problem) {
      // No model to ask is a failure (the agent is shown `failed`); a budget spent is not.
      const data = budget ? undefined : FAILED;
      await appendEvent(db, agent.id, "error", problem, data, stamp(deps));
      await notifyError(deps, agent, signal, problem);
      // Like any end of turn, mail that arrived meanwhile is taken in, never stranded under an
      // idle agent; it cannot loop: each pass consumes the mail it finds.
      if ((await takePendingMail(db, agent, deps.fence)) === "idle") return "idle";
      continue;
    }
    const lastId = last.id;
    const known: PassKnown = {
      parent: read.parent ?? null,
      read: read.conversation,
      thinking: read.thinking || agent.activity === "thinking",
      // Counted with the turn's first answer (recordAnswer), once.
      turnStart: startingTurn ? lastId : undefined,
      watched: read.watched,
    };
    // The step needs none of the pass's rows but the conversation, which `known` hands over to
    // the request once (askModel).
    read = tail = last = undefined;
    let ended: StepEnd | undefined;
    const work = async () => {
      // A root's turn is one trace, also when another worker resumes it (telemetry on).
      const traceparent = beginRootRun(agent, startingTurn);
      if (traceparent !== undefined) await setRootTrace(db, agent.id, traceparent);
      ended = await step(deps, agent, known, lastId, signal, () => beforeWrites(agent));
    };
    if (!(await guarded(deps, agent, signal, work))) {
      return "other";
    }
    stepped = ended;
    // The model answered without calls: the turn is over, as the next pass would read from the
    // rows, so it ends without that read (the turn's end checks the lease itself). Mostly the
    // answer's own statement ended it; a stop that came meanwhile goes through the pass, which
    // handles it.
    if (ended !== undefined && ended !== "called" && (ended.end !== null || !signal.aborted)) {
      if (ended.end === null && (await mailFinal(deps, agent, ended.answer)) === "reminded") {
        continue;
      }
      const next =
        ended.end === null
          ? await takePendingMail(db, agent, deps.fence)
          : await settleTurnEnd(db, agent, ended.end, deps.fence);
      if (next === "idle") return "idle";
    }
  }
}

/** The event of a pass's tail that decides the next step: the newest of the context or an end. */
function decidingEvent(tail: EventRow[]): EventRow | undefined {
  for (let i = tail.length - 1; i >= 0; i--) {
    const e = tail[i]!;
    if (CONTEXT_KINDS.has(e.kind) || TURN_ENDERS.has(e.kind)) return e;
  }
  return undefined;
}

/**
 * The data of an `error` event that ends a turn as failed: the database keeps its text as the
 * agent's `failure` until the next turn starts (migration 0029).
 */
const FAILED = { failed: true };

/** How a step ended: tools ran, or the model answered without calls (and how its turn ended). */
type StepEnd = "called" | { end: AnswerEnd; answer: { id: number; content: string } };

/** The error a child's turn ends with when it gave no result matching its output schema twice. */
export const NO_RESULT = "no result matching output_schema";

/**
 * A child the fork tool made mails the text its turn ended with to its parent, unless it mailed
 * the parent in that turn (mail/final-answer.ts decides, keyed by the answer). With an output
 * schema, a turn that owed a result and gave none valid is reminded once ("reminded": the turn
 * goes on), then ends `failed` with NO_RESULT. Each write is keyed by the answer: a resumed
 * turn repeats none.
 */
async function mailFinal(
  deps: TurnDeps,
  agent: AgentRow,
  answer: { id: number; content: string },
): Promise<"done" | "reminded"> {
  if (!reportsToParent(agent)) return "done";
  const schema = agent.output_schema;
  const check = schema ? checkResult(schema, answer.content) : undefined;
  const found = await mailFinalAnswer(
    deps.db,
    agent.id,
    answer.id,
    check === undefined || check.ok,
    deps.fence,
    check?.ok ? { value: check.value } : undefined,
    traceparentFor(agent.id),
  );
  if (!schema || !check || check.ok || !found.owed || found.sent) return "done";
  if (!found.reminded) {
    const text =
      "Your turn ended without your result. Send your parent one JSON value valid against " +
      `your output_schema (send with to "parent" and final: true). The problem: ${check.error}`;
    await appendEventOnce(
      deps.db,
      agent.id,
      "user",
      text,
      { reminder: true },
      { ...stamp(deps), key: `remind:${answer.id}` },
    );
    return "reminded";
  }
  await appendEventOnce(deps.db, agent.id, "error", NO_RESULT, FAILED, {
    ...stamp(deps),
    key: `noresult:${answer.id}`,
  });
  return "done";
}

function reportsToParent(agent: AgentRow): boolean {
  return agent.parent_id !== null && agent.caps?.reports === true;
}

/**
 * Runs one piece of a turn. False when the turn ended instead: stopped from outside, or failed
 * (then an `error` event records why and the agent goes idle, unless mail is pending: then it
 * is taken in and the loop goes on, as at a normal end of turn).
 */
async function guarded(
  deps: TurnDeps,
  agent: AgentRow,
  signal: AbortSignal,
  work: () => Promise<void>,
): Promise<boolean> {
  try {
    await work();
    return true;
  } catch (err) {
    // Not the turn's failure: runAgent retries the loop, or stops writing (lease lost).
    if (isLeaseLost(err) || (isTransient(err) && !signal.aborted)) throw err;
    const stopped = stopReason(signal);
    if (stopped) {
      await handleStop(deps, (await getAgent(deps.db, agent.id)) ?? agent, stopped);
      return false;
    }
    const what = err instanceof ModelError ? "model error" : "internal error";
    // Marked failed: until its next turn the agent is `failed`, not `idle` (migration 0029).
    await appendEvent(
      deps.db,
      agent.id,
      "error",
      `${what}: ${shownError(err)}`,
      FAILED,
      stamp(deps),
    );
    await notifyError(deps, agent, signal, `${what}: ${shownError(err)}`);
    return (await takePendingMail(deps.db, agent, deps.fence)) === "continue";
  }
}

function hookSite(deps: TurnDeps, agent: AgentRow, signal: AbortSignal): HookSite {
  return {
    db: deps.db,
    config: deps.config,
    agent,
    signal,
    fence: deps.fence,
    onWarning: deps.onWarning,
  };
}

/** The Notification hooks of a turn that failed (the TUI rings for the same `error` event). */
async function notifyError(
  deps: TurnDeps,
  agent: AgentRow,
  signal: AbortSignal,
  text: string,
): Promise<void> {
  if (!hasHooks(deps.config, "Notification")) return;
  await notificationHooks(hookSite(deps, agent, signal), "error", `${agent.name} failed: ${text}`);
}

/** Nothing left to do in this turn: the model answered without calls, or a /wait or interrupt ended it. */
function turnIsOver(events: EventRow[], last: EventRow): boolean {
  if (TURN_ENDERS.has(last.kind)) return true;
  if (last.kind === "assistant") return !hasToolCalls(last.data);
  if (last.kind !== "tool_result") return false;
  const call = [...events].reverse().find((e) => e.kind === "assistant");
  return isPersonCall(call?.data) || sentFinal(events, call);
}

/**
 * The answer `call` made a `send {final: true}` that was sent: the turn ends after its results,
 * without asking the model again (a child's result costs one request). A refused one (a bad
 * recipient, a result not matching the output schema) lets the model repair it in this turn.
 */
function sentFinal(events: EventRow[], call: EventRow | undefined): boolean {
  if (!call || !Array.isArray(call.data?.tool_calls)) return false;
  const finals = (call.data.tool_calls as ToolCall[]).filter(
    (c) => c.name === "send" && isFinalSend(c.arguments),
  );
  if (finals.length === 0) return false;
  return finals.every((c) =>
    events.some(
      (e) =>
        e.id > call.id &&
        e.kind === "tool_result" &&
        e.data?.tool_call_id === c.id &&
        e.content.startsWith('{"status":"sent"'),
    ),
  );
}

/**
 * A turn this loop's step ended with `send {final: true}` runs its Stop (SubagentStop) hooks as an
 * answer's end does (step), with the result sent as the last message: right after the calls that
 * ended it, so a turn resumed by another worker does not repeat them (as for an answer).
 */
async function finalSendStopHooks(
  deps: TurnDeps,
  agent: AgentRow,
  tail: EventRow[],
  signal: AbortSignal,
): Promise<void> {
  const call = [...tail].reverse().find((e) => e.kind === "assistant");
  if (signal.aborted || !hasHooks(deps.config, stopEventOf(agent)) || !sentFinal(tail, call)) {
    return;
  }
  const sent = (call!.data!.tool_calls as ToolCall[])
    .map((c) => (c.name === "send" ? finalMessage(c.arguments) : undefined))
    .filter((m) => m !== undefined);
  await stopHooks(hookSite(deps, agent, signal), sent.join("\n") || call!.content);
}

function isFinalSend(args: string): boolean {
  return finalMessage(args) !== undefined;
}

/** The message of a `send` call's arguments with `final: true`; undefined for any other. */
function finalMessage(args: string): string | undefined {
  try {
    const parsed = JSON.parse(args) as { final?: unknown; message?: unknown } | null;
    return parsed?.final === true ? String(parsed.message ?? "") : undefined;
  } catch {
    return undefined;
  }
}

function hasToolCalls(data: Record<string, unknown> | null): boolean {
  return Array.isArray(data?.tool_calls) && (data.tool_calls as unknown[]).length > 0;
}

/** Does `fence` still hold the agent's lease (as the row read last says)? */
function holds(agent: AgentRow, fence: Fence): boolean {
  return agent.lease_owner === fence.owner && agent.lease_epoch === fence.epoch;
}

/** The stamp of a turn's write: its epoch, checked by the database (events_fence). */
function stamp(deps: TurnDeps, key?: string): { key?: string; epoch?: number } {
  return {
    ...(key === undefined ? {} : { key }),
    ...(deps.fence ? { epoch: deps.fence.epoch } : {}),
  };
}

/** What the pass that chose a step read: the parent's row (null: a root), the conversation. */
interface PassKnown {
  parent: AgentRow | null;
  /**
   * The conversation the pass read, until the request takes it (askModel): a step blocked in a
   * tool call keeps none of it.
   */
  read: ConversationRead | undefined;
  /** The row says "thinking" already: the pass read it so, or wrote it. */
  thinking: boolean;
  /** The pass found a feed watching the agent's stream. */
  watched: boolean;
  /** The event that started the turn, when this step is its first. */
  turnStart: number | undefined;
}

/** Tools that change no file in the working directory (the rest may: bash, edits, MCP). */
const READ_ONLY_TOOLS = new Set([
  "read_file",
  "glob",
  "grep",
  "send",
  "wait",
  "fork",
  "kill",
  "task_add",
  "task_claim",
  "task_done",
  "task_list",
  "skill",
]);

/**
 * One model call and the tool calls it asked for. `tail` is the last event of the context the
 * model answers: the assistant event is keyed by it, so an answer is recorded once.
 */
async function step(
  deps: TurnDeps,
  agent: AgentRow,
  known: PassKnown,
  tail: number,
  signal: AbortSignal,
  beforeWrites: () => Promise<void>,
): Promise<StepEnd> {
  const mcp = await mcpToolsFor(deps.db, deps.config.mcpServers, deps.onWarning);
  const tools = withSkills(
    toolsFor(capabilitiesOf(deps.config, agent).tools, mcp),
    agent.cwd ?? process.cwd(),
  );
  // Instruction and agent files an agent changed: asked about, left out until accepted.
  await noticeFileChanges(deps.db, deps.config, agent, deps.onWarning);
  const asked = await askModel(deps, agent, known, tail, tools, signal);
  if (asked.calls.length === 0) {
    // The turn's end waited for the Stop hooks (askModel): they run while the agent still runs,
    // so `-p` and an interrupt see them as part of the turn.
    if (asked.ended === null && !signal.aborted && hasHooks(deps.config, stopEventOf(agent))) {
      await stopHooks(hookSite(deps, agent, signal), asked.text);
    }
    return { end: asked.ended, answer: { id: asked.assistantId, content: asked.text } };
  }
  // The turn's files as they were, for a rewind, before anything of it may change them.
  if (asked.calls.some((c) => !READ_ONLY_TOOLS.has(c.name))) await beforeWrites();
  await runToolCalls(toolRunDeps(deps, agent, asked.assistantId, signal, tools), asked.calls, {
    shownWithAnswer: asked.shown,
  });
  // An isolated agent's edits, measured once its calls are done: the panel shows them.
  if (agent.worktree && asked.calls.some((c) => !READ_ONLY_TOOLS.has(c.name)))
    await recordChanges(deps.db, agent.id, agent.worktree, deps.fence);
  return "called";
}

/**
 * The model call of a step, recorded. A function of its own so that its frame (the context sent,
 * the response, the stream publisher) is gone while the tools run: a turn blocked in `wait` for
 * an hour holds only what `step` keeps (see the memory rows in the README).
 */
async function askModel(
  deps: TurnDeps,
  agent: AgentRow,
  known: PassKnown,
  tail: number,
  tools: AnyTool[],
  signal: AbortSignal,
): Promise<{
  assistantId: number;
  calls: ToolCall[];
  shown: string | null;
  ended: AnswerEnd;
  text: string;
}> {
  const { db, config } = deps;
  const modelName = agent.model ?? config.model.name ?? "";
  // Compacted first when it would not fit the model's context window (compaction.ts).
  const messages = await fitContext(
    deps,
    agent,
    modelName,
    toolSpecs(tools, config.profiles),
    signal,
    known,
  );
  // Sent now (in `messages`, gone with this frame): the step that waits on its tools keeps none.
  known.read = undefined;
  // No write when the row says "thinking" already: the pass read it so (the calls in between
  // showed nothing) or wrote it. The lease was checked by that same read (and its write is
  // fenced); the answer's write is fenced anyway.
  if (!known.thinking) await setActivity(db, agent.id, "thinking", deps.fence);
  // Partial text reaches feeds through agent_streams; the assistant event then replaces it.
  const stream = createStreamPublisher(db, agent, {
    fence: deps.fence,
    onFenced: deps.onLeaseLost,
    // Unwatched as of the pass just read: the first delta need not ask again at once.
    unwatched: !known.watched,
  });
  const chat = startChat(agent, modelName);
  const response = await completeFitting(deps, agent, {
    model: modelName,
    messages,
    tools: toolSpecs(tools, config.profiles),
    signal,
    onText: stream.onText,
    onReasoning: stream.onReasoning,
  }).catch(async (err: unknown) => {
    failChat(chat, modelName, err);
    await stream.settle();
    // Interrupted mid-answer: what the person saw streamed stays (keepStreamed); otherwise the
    // live text just ends.
    const kept =
      stopReason(signal) === "interrupt" &&
      (await keepStreamed(deps, agent, known, tail, stream.streamed()));
    if (!kept) await endStream(db, agent).catch(() => undefined);
    throw err;
  });
  endChat(chat, modelName, {
    ...response,
    cost: chat && requestCost(config.prices, modelName, response.usage),
  });
  await stream.settle();
  // Retried on its own, so that a response the model already gave is not lost to a blip. Keyed by
  // the request it answers: when a retry finds the answer recorded (its first commit's reply was
  // lost), it goes on with that one and counts its tokens once. The epoch fences the write.
  const {
    row: assistant,
    fresh,
    ended,
  } = await withRetry(
    () =>
      recordAnswer(
        db,
        agent,
        {
          text: response.text,
          data: {
            tool_calls: response.toolCalls,
            finish_reason: response.finishReason,
            usage: response.usage,
            // Kept for people (the TUI shows it dimmed); context.ts never sends it back to a model.
            ...(response.reasoning ? { reasoning: response.reasoning } : {}),
          },
          usage: response.usage,
          calls: response.toolCalls,
          activity: firstActivity(response.toolCalls),
          turnStart: known.turnStart,
          // An answer without calls ends the turn in the same statement, unless a stop came
          // (that goes through the pass) or Stop hooks must run first (step).
          // A child's answer with text is mailed to its parent before its turn ends (mailFinal).
          endsTurn:
            response.toolCalls.length === 0 &&
            !(reportsToParent(agent) && (response.text.trim() !== "" || !!agent.output_schema)) &&
            !signal.aborted &&
            !hasHooks(config, stopEventOf(agent)),
        },
        {
          key: eventKey.assistant(tail),
          ...stamp(deps),
          ...(deps.fence ? { owner: deps.fence.owner } : {}),
        },
      ),
    { signal },
  );
  const calls = fresh ? response.toolCalls : recordedCalls(assistant.data);
  // The answer's statement (or the attempt a retry found) wrote the calls' first activity line.
  return {
    assistantId: assistant.id,
    calls,
    shown: firstActivity(calls),
    ended,
    text: assistant.content,
  };
}

/**
 * Records what an interrupted response streamed as a partial answer, keyed like the full one
 * (the next turn's model sees it too). False when there is nothing to keep or it was refused.
 */
async function keepStreamed(
  deps: TurnDeps,
  agent: AgentRow,
  known: PassKnown,
  tail: number,
  { text, reasoning }: { text: string; reasoning: string },
): Promise<boolean> {
  if (text.trim() === "" && reasoning === "") return false;
  const answer = {
    text,
    data: { finish_reason: "interrupted", partial: true, ...(reasoning ? { reasoning } : {}) },
    // The server's count never came: the output is estimated, the input not counted.
    usage: { inputTokens: 0, outputTokens: estimateTokens(reasoning + text), estimated: true },
    calls: [],
    activity: null,
    turnStart: known.turnStart,
  };
  return recordAnswer(deps.db, agent, answer, {
    key: eventKey.assistant(tail),
    ...stamp(deps),
  }).then(
    () => true,
    () => false,
  );
}

/** One request's cost in USD by the config's prices (undefined: the model has none). */
function requestCost(prices: Prices, model: string, usage: Usage): number | undefined {
  const row = {
    model,
    input_tokens: usage.inputTokens,
    cached_tokens: usage.cachedTokens ?? 0,
    output_tokens: usage.outputTokens,
  };
  return agentCost(row, prices);
}

function recordedCalls(data: Record<string, unknown> | null): ToolCall[] {
  return Array.isArray(data?.tool_calls) ? (data.tool_calls as ToolCall[]) : [];
}

/**
 * A stop from outside. An interrupt answers the calls left open and records it, then ends the
 * turn like any other end: pending mail is taken in (the agent runs again at once, on a fresh
 * claim) or the agent goes idle. Death, a lost lease and shutdown write nothing.
 */
async function handleStop(deps: TurnDeps, agent: AgentRow, reason: StopReason): Promise<void> {
  if (reason !== "interrupt" || agent.state === "dead") return;
  const note = "interrupted by the person";
  await closeDanglingCalls(
    deps.db,
    agent.id,
    JSON.stringify({ error: { code: "INTERNAL", message: note } }),
    deps.fence,
  );
  await cancelPending(deps.db, agent.id);
  await appendEvent(deps.db, agent.id, "interrupted", note, undefined, stamp(deps));
  await takePendingMail(deps.db, agent, deps.fence, { endInterrupt: true });
}

/**
 * Gives every tool call of the last assistant message that has no result an `interrupted`
 * result (interrupts), so the model sees each call answered. Keyed and counted like any result:
 * a call answered meanwhile keeps its answer and its count.
 */
export async function closeDanglingCalls(
  db: Db,
  agentId: string,
  content: string,
  fence?: Fence,
): Promise<number> {
  const dangling = await findDanglingCalls(db, agentId);
  for (const call of dangling?.calls ?? []) {
    await appendToolResultOnce(
      db,
      agentId,
      content,
      { tool_call_id: call.id, name: call.name, interrupted: true },
      {
        key: eventKey.toolResult(dangling!.eventId, call.id),
        ...(fence ? { epoch: fence.epoch } : {}),
      },
    );
  }
  return dangling?.calls.length ?? 0;
}
