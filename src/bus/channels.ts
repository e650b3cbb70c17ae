// Channel names and the NOTIFY helper. Payloads are hints (a stream's may carry its newest text);
// the rows are the truth.
import { sql, type SQL } from "drizzle-orm";
import type { Queryable } from "../db/client.js";

/**
 * One channel per agent: mail to it, its state changes, its death, interrupts, and `child` when
 * one of its children enters or leaves idle or dead (trigger agents_tell_parent, migration 0017).
 */
export function agentChannel(agentId: string): string {
  return `agent_event_${agentId}`;
}

/**
 * One channel per tree, for feeds (TUIs): database triggers send `a:<agent id>` (agent row
 * changed), `e:<agent id>:<event id>` (new event), `i:<agent id>` (queued input changed); the
 * stream publisher sends `d:`/`w:`/`s:` hints, the small ones carrying the streamed text itself
 * (src/feed/stream-hints.ts). A feed LISTENs to one channel however many agents.
 */
export function treeChannel(treeId: string): string {
  return `warren_tree_${treeId}`;
}

/** "There is an agent with work to do": workers listen here. */
export const WORK_CHANNEL = "warren_work";

/**
 * "Stop this agent's turn": `<agent id>:dead` (killed) or `<agent id>:interrupt`, sent with the
 * same hint on the agent's own channel. Each scheduler LISTENs here once, for every turn it runs,
 * instead of one LISTEN and UNLISTEN on the agent's channel per turn.
 */
export const STOP_CHANNEL = "warren_stop";

export type StopSignal = "dead" | "interrupt";

/**
 * The NOTIFYs (select-list items) that stop the turn of the agent whose id is the SQL expression
 * `id`: the signal on its own channel (waits and approvals hear it there) and on STOP_CHANNEL.
 */
export function stopNotifiesSql(id: SQL, signal: StopSignal): SQL {
  return sql`pg_notify(${agentChannel("")} || (${id})::text, ${signal}),
             pg_notify(${STOP_CHANNEL}, (${id})::text || ${`:${signal}`})`;
}

/** The agent and signal of a STOP_CHANNEL payload; undefined for anything else. */
export function parseStopHint(
  payload: string,
): { agentId: string; signal: StopSignal } | undefined {
  const [agentId, signal] = payload.split(":");
  if (!agentId || (signal !== "dead" && signal !== "interrupt")) return undefined;
  return { agentId, signal };
}

export type AgentSignal = "mail" | "state" | "dead" | "interrupt" | typeof CHILD_HINT;

/** On a parent's channel: a child's state moved a fan-in entry (migrations/0017). */
export const CHILD_HINT = "child";

/** Sends a NOTIFY inside the caller's transaction (delivered on commit). */
export async function notify(q: Queryable, channel: string, payload: string): Promise<void> {
  await q.execute(sql`select pg_notify(${channel}, ${payload})`);
}

/**
 * Model-server slots (runtime/model-cap.ts, migration 0026): a granted waiter's ticket, or "*"
 * when every waiter should re-check (a 429 paused a server).
 */
export const MODEL_SLOT_CHANNEL = "warren_model_slot";
