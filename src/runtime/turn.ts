// The turn loop of one agent. Stateless between steps: each step reads the transcript's tail and
// decides (call the model, run tools, take pending mail, or go idle), so a process that crashed
// mid-turn is resumed by whoever claims the agent next.
import { sql } from "drizzle-orm";
import type { AgentRow } from "../agents/agents.sql.js";
import { agents } from "../agents/agents.sql.js";
import { appendEvent, listEvents } from "../agents/events.js";
import { getAgent } from "../agents/refs.js";
import type { Bus } from "../bus/bus.js";
import { modelProblem, type Config } from "../config/config.js";
import type { Db } from "../db/client.js";
import { ModelError, type Model, type ToolCall } from "../llm/model.js";
import type { FanInEntry } from "../mail/wait.js";
import { errorMessage } from "../tools/tool.js";
import { toolsFor, toolSpecs } from "../tools/registry.js";
import { buildContext, INTERRUPTED_RESULT } from "./context.js";
import { runToolCalls } from "./tool-calls.js";
import { budgetProblem, markIdle, takePendingMail } from "./turn-end.js";

export interface TurnDeps {
  db: Db;
  bus: Bus;
  model: Model;
  config: Config;
  onWaitProgress?: (agentId: string, entries: FanInEntry[]) => void;
}

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
 */
export async function runAgent(
  deps: TurnDeps,
  agentId: string,
  signal: AbortSignal,
): Promise<void> {
  const { db } = deps;
  await closeDanglingCalls(db, agentId, INTERRUPTED_RESULT);
  while (true) {
    const agent = await getAgent(db, agentId);
    if (!agent || agent.state === "dead") return;
    const reason = stopReason(signal) ?? (agent.interrupt_requested_at ? "interrupt" : undefined);
    if (reason) return handleStop(deps, agent, reason);

    const events = await listEvents(db, agent.id, { after: await lastTurnBoundary(db, agent.id) });
    const last = [...events].reverse().find((e) => CONTEXT_KINDS.has(e.kind));
    if (!last || (last.kind === "assistant" && !hasToolCalls(last.data))) {
      // The model has answered: the turn is over unless mail arrived meanwhile.
      if ((await takePendingMail(db, agent)) === "idle") return;
      continue;
    }
    const startingTurn = last.kind === "user" || last.kind === "mail_in";
    const problem = budgetProblem(agent, startingTurn) ?? modelProblem(deps.config.model);
    if (problem) {
      await appendEvent(db, agent.id, "error", problem);
      await goIdle(db, agent.id);
      return;
    }
    if (startingTurn) await countTurn(db, agent.id);
    try {
      await step(deps, agent, signal);
    } catch (err) {
      const stopped = stopReason(signal);
      if (stopped) return handleStop(deps, (await getAgent(db, agentId)) ?? agent, stopped);
      const what = err instanceof ModelError ? "model error" : "internal error";
      await appendEvent(db, agent.id, "error", `${what}: ${errorMessage(err)}`);
      await goIdle(db, agent.id);
      return;
    }
  }
}

const CONTEXT_KINDS = new Set(["user", "mail_in", "assistant", "tool_result"]);

function hasToolCalls(data: Record<string, unknown> | null): boolean {
  return Array.isArray(data?.tool_calls) && (data.tool_calls as unknown[]).length > 0;
}

/** Only the tail matters for deciding the next step; the last user message bounds it. */
async function lastTurnBoundary(db: Db, agentId: string): Promise<number | undefined> {
  const rows = await db.execute<{ id: string }>(sql`
    select id from events where agent_id = ${agentId} and kind in ('user', 'mail_in')
     order by id desc limit 1`);
  const id = rows.rows[0]?.id;
  return id === undefined ? undefined : Number(id) - 1;
}

/** One model call and the tool calls it asked for. */
async function step(deps: TurnDeps, agent: AgentRow, signal: AbortSignal): Promise<void> {
  const { db, config } = deps;
  const profile = agent.profile ? config.profiles[agent.profile] : undefined;
  const tools = toolsFor(profile);
  const messages = await buildContext(db, agent);
  const response = await deps.model.complete({
    model: agent.model ?? config.model.name ?? "",
    messages,
    tools: toolSpecs(tools),
    signal,
  });
  const assistant = await db.transaction(async (tx) => {
    const event = await appendEvent(tx, agent.id, "assistant", response.text, {
      tool_calls: response.toolCalls,
      finish_reason: response.finishReason,
      usage: response.usage,
    });
    await tx
      .update(agents)
      .set({
        input_tokens: sql`${agents.input_tokens} + ${response.usage.inputTokens}`,
        output_tokens: sql`${agents.output_tokens} + ${response.usage.outputTokens}`,
        last_activity_at: sql`now()`,
      })
      .where(sql`${agents.id} = ${agent.id}`);
    return event;
  });
  if (response.toolCalls.length === 0) return;
  await runToolCalls(
    {
      db,
      bus: deps.bus,
      agent,
      tools,
      config,
      assistantEventId: assistant.id,
      signal,
      onWaitProgress: deps.onWaitProgress,
    },
    response.toolCalls,
  );
}

async function countTurn(db: Db, agentId: string): Promise<void> {
  await db
    .update(agents)
    .set({ turns: sql`${agents.turns} + 1`, last_activity_at: sql`now()` })
    .where(sql`${agents.id} = ${agentId}`);
}

/** Goes idle and gives up the lease; a dead agent stays dead. */
export async function goIdle(db: Db, agentId: string): Promise<void> {
  await db.transaction((tx) => markIdle(tx, agentId));
}

async function handleStop(deps: TurnDeps, agent: AgentRow, reason: StopReason): Promise<void> {
  if (reason !== "interrupt" || agent.state === "dead") return;
  const note = "interrupted by the person";
  await closeDanglingCalls(
    deps.db,
    agent.id,
    JSON.stringify({ error: { code: "INTERNAL", message: note } }),
  );
  await appendEvent(deps.db, agent.id, "interrupted", note);
  await goIdle(deps.db, agent.id);
}

/**
 * Gives every tool call of the last assistant message that has no result an `interrupted`
 * result (crash recovery, interrupts), so the model sees each call answered.
 */
export async function closeDanglingCalls(
  db: Db,
  agentId: string,
  content: string,
): Promise<number> {
  const rows = await db.execute<{ id: string; data: { tool_calls?: ToolCall[] } | null }>(sql`
    select id, data from events where agent_id = ${agentId} and kind = 'assistant'
     order by id desc limit 1`);
  const last = rows.rows[0];
  const calls = last?.data?.tool_calls ?? [];
  if (!last || calls.length === 0) return 0;
  const answered = await db.execute<{ call: string }>(sql`
    select data->>'tool_call_id' as call from events
     where agent_id = ${agentId} and kind = 'tool_result' and id > ${last.id}`);
  const done = new Set(answered.rows.map((r) => r.call));
  const missing = calls.filter((c) => !done.has(c.id));
  for (const call of missing) {
    await appendEvent(db, agentId, "tool_result", content, {
      tool_call_id: call.id,
      name: call.name,
      interrupted: true,
    });
  }
  return missing.length;
}
