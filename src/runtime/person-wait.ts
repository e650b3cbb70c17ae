// The person's `/wait`: recorded as a `wait` tool call of the agent itself (by: "person") and left
// dangling for the scheduler, whose runAgent resumes dangling waits. So /wait gets the agent's own
// wait — scheduler, lease, Escape, recorded result — and never races the scheduler for the agent.
import { sql } from "drizzle-orm";
import { AgentError } from "../agents/errors.js";
import { DEFAULT_LIMITS, type Limits } from "../agents/limits.js";
import { displayName, getAgent } from "../agents/refs.js";
import { agentChannel, notify, WORK_CHANNEL } from "../bus/channels.js";
import type { Db } from "../db/client.js";
import type { ToolCall } from "../llm/model.js";

export interface PersonWaitRequest {
  timeoutSeconds: number;
  /** Resolved agent ids (fan-in); absent = the oldest mail from anyone. */
  fromAgents?: string[];
}

export interface PersonWaitReceipt {
  /** The `assistant` event holding the call. */
  eventId: number;
  call: ToolCall;
}

/** Prefix of the ids of person-made wait calls (`person_wait_<event id>`). */
export const PERSON_WAIT_PREFIX = "person_wait_";

/**
 * Starts a wait of the idle agent `agentId` on the person's behalf: NOT_ALLOWED when it is busy,
 * AGENT_DEAD when dead, INVALID_ARGS / LIMIT_EXCEEDED / UNKNOWN_AGENT for a bad request.
 */
export async function requestWait(
  db: Db,
  agentId: string,
  request: PersonWaitRequest,
  limits: Limits = DEFAULT_LIMITS,
): Promise<PersonWaitReceipt> {
  const timeout = request.timeoutSeconds;
  if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout < 0) {
    throw new AgentError("INVALID_ARGS", "the timeout must be a number of seconds ≥ 0");
  }
  if (timeout > limits.maxWaitSeconds) {
    throw new AgentError("LIMIT_EXCEEDED", `the timeout may be at most ${limits.maxWaitSeconds} s`);
  }
  const from = request.fromAgents ? [...new Set(request.fromAgents)] : undefined;
  if (from && from.length === 0) {
    throw new AgentError("INVALID_ARGS", "name at least one agent to wait for, or none");
  }
  if (from?.includes(agentId)) {
    throw new AgentError("INVALID_ARGS", "an agent cannot wait for itself");
  }
  return db.transaction(async (tx) => {
    const agent = await getAgent(tx, agentId);
    if (!agent) throw new AgentError("UNKNOWN_AGENT", `no agent ${agentId}`);
    // The row lock orders this against a send or input waking the agent at the same moment.
    const [locked] = (
      await tx.execute<{ state: string }>(
        sql`select state from agents where id = ${agentId} for update`,
      )
    ).rows;
    if (locked?.state === "dead") {
      throw new AgentError("AGENT_DEAD", `${displayName(agent)} is dead`);
    }
    if (locked?.state !== "idle") {
      throw new AgentError("NOT_ALLOWED", `${displayName(agent)} is busy; /wait needs it idle`);
    }
    if (from) {
      const found = await tx.execute<{ id: string }>(sql`
        select id from agents
         where id = any(${sql.param(from)}::uuid[]) and tree_id = ${agent.tree_id}`);
      const known = new Set(found.rows.map((r) => r.id));
      const missing = from.filter((id) => !known.has(id));
      if (missing.length) {
        throw new AgentError("UNKNOWN_AGENT", `no agent ${missing.join(", ")} in this tree`);
      }
    }
    const [seq] = (
      await tx.execute<{ id: string }>(
        sql`select nextval(pg_get_serial_sequence('events', 'id')) as id`,
      )
    ).rows;
    const eventId = Number(seq!.id);
    const args = from ? { timeout, from_agents: from } : { timeout };
    const call: ToolCall = {
      id: `${PERSON_WAIT_PREFIX}${eventId}`,
      name: "wait",
      arguments: JSON.stringify(args),
    };
    await tx.execute(sql`
      insert into events (id, agent_id, kind, content, data)
      values (${eventId}, ${agentId}, 'assistant', '',
              ${JSON.stringify({ tool_calls: [call], by: "person" })}::jsonb)`);
    await tx.execute(sql`
      insert into events (agent_id, kind, content, data)
      values (${agentId}, 'tool_call', ${`${call.name}(${call.arguments})`},
              ${JSON.stringify({ tool_call_id: call.id, name: call.name, arguments: call.arguments, by: "person" })}::jsonb)`);
    await tx.execute(sql`
      update agents set state = 'running', last_activity_at = now() where id = ${agentId}`);
    await notify(tx, agentChannel(agentId), "state");
    await notify(tx, WORK_CHANNEL, agentId);
    return { eventId, call };
  });
}

/** Was this assistant event's tool call made by the person's /wait (not the model)? */
export function isPersonCall(data: Record<string, unknown> | null | undefined): boolean {
  return data?.by === "person";
}
