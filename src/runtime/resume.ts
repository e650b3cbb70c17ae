// Calls left without a result when a run starts: a `wait` (in flight when its worker died, or the
// person's /wait) is resumed with its remaining time; any other call is answered `interrupted`.
import type { AgentRow } from "../agents/agents.sql.js";
import { appendEvent, appendToolResultOnce } from "../agents/events.js";
import { eventKey } from "../agents/event-keys.js";
import { DEFAULT_CLAIM_TIMEOUT } from "../tools/task-claim.js";
import type { Db } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import type { ToolCall } from "../llm/model.js";
import { mcpToolsFor } from "../mcp/catalog.js";
import { toolsFor, withSkills, type AnyTool } from "../tools/registry.js";
import { capabilitiesOf } from "../agents/capabilities.js";
import { waitTool } from "../tools/wait.js";
import { INTERRUPTED_RESULT } from "./context.js";
import { isPersonCall } from "./person-wait.js";
import { runToolCalls } from "./tool-calls.js";
import { approvalOfCall } from "../approvals/approvals.js";
import { toolRunDeps, type TurnDeps } from "./run-deps.js";

export interface DanglingCalls {
  /** The assistant event holding the calls. */
  eventId: number;
  /** Seconds since that event was written. */
  ageSeconds: number;
  /** Its calls without a result, in call order. */
  calls: ToolCall[];
  /** Made by the person's /wait, not by the model. */
  byPerson: boolean;
}

const LAST_ANSWER: Prepared = {
  name: "warren_last_answer",
  text: `select l.id, l.data, l.age,
                coalesce((select array_agg(r.data->>'tool_call_id') from events r
                           where r.agent_id = $1::uuid and r.kind = 'tool_result' and r.id > l.id
                             and r.rewound_at is null),
                         '{}') as answered
           from (select id, data, extract(epoch from now() - created_at)::float8 as age
                   from events where agent_id = $1::uuid and kind = 'assistant'
                    and rewound_at is null
                  order by id desc limit 1) l`,
};

/** The calls of the agent's last assistant message that have no result yet (one statement). */
export async function findDanglingCalls(
  db: Db,
  agentId: string,
): Promise<DanglingCalls | undefined> {
  const [last] = await runPrepared<{
    id: string;
    age: number;
    data: { tool_calls?: ToolCall[]; by?: string } | null;
    answered: string[];
  }>(db, LAST_ANSWER, [agentId]);
  const calls = last?.data?.tool_calls ?? [];
  if (!last || calls.length === 0) return undefined;
  const done = new Set(last.answered);
  const missing = calls.filter((c) => !done.has(c.id));
  if (missing.length === 0) return undefined;
  return {
    eventId: Number(last.id),
    ageSeconds: Number(last.age),
    calls: missing,
    byPerson: isPersonCall(last.data),
  };
}

/**
 * Did this call ask for approval and never start running (still asking, or answered meanwhile)?
 * Then nothing of it ran, and it goes through its request again (the gate runs it at most once).
 */
async function notStarted(deps: TurnDeps, agentId: string, callKey: string): Promise<boolean> {
  const request = await approvalOfCall(deps.db, agentId, callKey);
  return request !== undefined && request.started_at === null;
}

/**
 * Tools whose whole effect commits in the transaction that records their result (effects.ts);
 * task_list only reads.
 */
const ATOMIC_EFFECTS = new Set([
  "fork",
  "send",
  "kill",
  "task_add",
  "task_claim",
  "task_done",
  "task_list",
]);

/**
 * At the start of a run: a dangling `wait` (in flight when its worker died, or the person's
 * /wait) is resumed with its remaining time — it consumed nothing, so that is safe (SPEC §3); a
 * dangling fork, send or kill runs (it did nothing: its effect commits with its result), as does a
 * call whose approval request never let it start; every other call gets an `interrupted` result,
 * since it may have partly run.
 */
export async function resumeDanglingCalls(
  deps: TurnDeps,
  agent: AgentRow,
  signal: AbortSignal,
): Promise<void> {
  const dangling = await findDanglingCalls(deps.db, agent.id);
  if (!dangling) return;
  // Keyed, fenced and counted like every result: a stale worker writes none, and a call answered
  // meanwhile keeps its answer and its count.
  const epoch = deps.fence ? { epoch: deps.fence.epoch } : {};
  // Calls that can safely run now: an effect (fork, send, kill) commits with its keyed result, so
  // one without a result did nothing and runs now, once; a call that was waiting for a person's
  // approval waits again (nothing of it ran yet).
  const rerun: ToolCall[] = [];
  for (const call of dangling.calls.filter((c) => c.name !== "wait")) {
    const key = eventKey.toolResult(dangling.eventId, call.id);
    if (ATOMIC_EFFECTS.has(call.name) || (await notStarted(deps, agent.id, key))) {
      // A claim that was waiting claimed nothing: it waits again for the time it has left.
      rerun.push(
        call.name === "task_claim"
          ? {
              ...call,
              arguments: remainingWait(call.arguments, dangling.ageSeconds, DEFAULT_CLAIM_TIMEOUT),
            }
          : call,
      );
      continue;
    }
    await appendToolResultOnce(
      deps.db,
      agent.id,
      INTERRUPTED_RESULT,
      { tool_call_id: call.id, name: call.name, interrupted: true },
      { key, ...epoch },
    );
  }
  const waits = dangling.calls
    .filter((c) => c.name === "wait")
    .map((c) => ({ ...c, arguments: remainingWait(c.arguments, dangling.ageSeconds) }));
  const mcp = await mcpToolsFor(deps.db, deps.config.mcpServers, deps.onWarning);
  const offered = withSkills(
    toolsFor(capabilitiesOf(deps.config, agent).tools, mcp),
    agent.cwd ?? process.cwd(),
  );
  if (rerun.length > 0) {
    await runToolCalls(toolRunDeps(deps, agent, dangling.eventId, signal, offered), rerun);
  }
  if (waits.length === 0) return;
  if (!dangling.byPerson) {
    // Shown in the scrollback (not model context): the wait outlived a worker.
    const left = waits.map((c) => waitTimeout(c.arguments));
    const shown = left.map((t) => (t === undefined ? "?" : `${t} s`)).join(", ");
    await appendEvent(
      deps.db,
      agent.id,
      "system",
      `wait resumed after its worker stopped (${shown} left)`,
      {
        resumed_wait: true,
        remaining_seconds: left,
      },
      epoch,
    );
  }
  const tools = offered.filter((t) => t.name === "wait");
  await runToolCalls(
    toolRunDeps(
      deps,
      agent,
      dangling.eventId,
      signal,
      tools.length ? tools : [waitTool as AnyTool],
    ),
    waits,
  );
}

/**
 * The arguments of a resumed wait or claim: its timeout (a claim's default when it named none)
 * less the seconds already spent, never below 0. Malformed arguments are left for the tool to
 * refuse.
 */
export function remainingWait(
  argumentsText: string,
  spentSeconds: number,
  defaultTimeout?: number,
): string {
  let args: unknown;
  try {
    args = JSON.parse(argumentsText) ?? {};
  } catch {
    return argumentsText;
  }
  if (typeof args !== "object" || Array.isArray(args)) return argumentsText;
  const given = (args as { timeout?: unknown }).timeout;
  const timeout =
    typeof given === "number" ? given : given === undefined ? defaultTimeout : undefined;
  if (timeout === undefined) return argumentsText;
  const left = Math.max(0, Math.round((timeout - spentSeconds) * 10) / 10);
  return JSON.stringify({ ...args, timeout: left });
}

function waitTimeout(argumentsText: string): number | undefined {
  try {
    const args = JSON.parse(argumentsText) as { timeout?: unknown } | null;
    return typeof args?.timeout === "number" ? args.timeout : undefined;
  } catch {
    return undefined;
  }
}
