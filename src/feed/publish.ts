// What the turn loop publishes for feeds besides events: the partial text of a streaming model
// response (stream-publisher.ts, re-exported here; its end below), the agent's `activity` and the
// live `wait_status` of a fan-in. Every write here is best effort: a failed write is dropped, never
// thrown into the turn — except a write refused for a stale lease epoch, which stops the turn.
import { sql, type SQL } from "drizzle-orm";
import type { WaitStatusEntry } from "../agents/agents.sql.js";
import { isLeaseLost, LeaseLost, type Fence } from "../agents/errors.js";
import { treeChannel } from "../bus/channels.js";
import type { Db, Queryable } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";

export {
  createStreamPublisher,
  STREAM_INTERVAL_MS,
  type StreamPublisher,
} from "./stream-publisher.js";

/** `lease_epoch = <the turn's epoch>` for a turn's update of its own row: the agents_fence
 * trigger refuses it once a claim has raised the epoch. Without a fence, the column stays. */
export function epochSet(fence: Fence | undefined): SQL {
  return fence ? sql`lease_epoch = ${fence.epoch}` : sql`lease_epoch = lease_epoch`;
}

/** Marks the agent's stream ended (live = false), in the caller's transaction when given one. */
export async function endStream(q: Queryable, agent: { id: string; tree_id: string }) {
  await runPrepared(q, END_STREAM, [agent.id, agent.tree_id]);
}

/**
 * The CTEs that end the agent's stream and tell the tree's feeds, as statement text for a named
 * statement whose parameters `agent` and `tree` are the agent's id and tree id (the answer that
 * replaces the stream does more in its statement: runtime/record-answer.ts): `stream_ended` and
 * `stream_told`. A SELECT CTE runs only when read, so the statement must read `stream_told`.
 */
export function streamEndCtesText(agent: string, tree: string): string {
  return `stream_ended as (
      update agent_streams set live = false, updated_at = now()
       where agent_id = ${agent}::uuid and live
      returning agent_id, response
    ), stream_told as (
      select pg_notify('${treeChannel("")}' || ${tree}::text,
                       's:' || agent_id::text || ':' || response::text || ':end')
        from stream_ended
    )`;
}

const END_STREAM: Prepared = {
  name: "warren_end_stream",
  text: `with ${streamEndCtesText("$1", "$2")} select count(*) from stream_told`,
};

/**
 * Sets what the agent is doing now ("thinking", "bash: npm test", …) while it is busy. Fenced by
 * the turn's epoch: refused, it throws LeaseLost; any other failure is dropped.
 */
export async function setActivity(db: Db, agentId: string, activity: string | null, fence?: Fence) {
  // With a fence the statement also says whether the lease is still held, whatever the state:
  // a worker whose agent was taken over (and perhaps finished) learns it here, before it asks
  // the model, even when there is no row to update.
  const held = await runPrepared<{ held: boolean }>(db, SET_ACTIVITY, [
    fence?.owner ?? null,
    fence?.epoch ?? null,
    agentId,
    activity,
  ]).then(
    ([row]) => row?.held !== false,
    // Refused for a stale epoch: lost. Any other failure: the line is cosmetic, dropped.
    (err: unknown) => !isLeaseLost(err),
  );
  if (fence && !held) throw new LeaseLost(agentId);
}

/** $1, $2: the fence's owner and epoch (both null: no fence); $3 the agent; $4 the line. */
const SET_ACTIVITY: Prepared = {
  name: "warren_set_activity",
  text: `with a as (
           select $2::bigint is null
                  or (lease_owner is not distinct from $1::text and lease_epoch = $2::bigint) as held
             from agents where id = $3::uuid
         ), u as (
           update agents set activity = $4::text, lease_epoch = coalesce($2::bigint, lease_epoch)
            where id = $3::uuid and state in ('running', 'waiting')
              and activity is distinct from $4::text and (select held from a)
         )
         -- u runs though nothing reads it: a data-modifying CTE always does.
         select coalesce((select held from a), false) as held`,
};

const ACTIVITY_MAX = 80;

function clip(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  const points = Array.from(oneLine);
  return points.length <= max ? oneLine : `${points.slice(0, max - 1).join("")}…`;
}

/** "<tool>: <short args>" for the agent panel and the spinner, from the raw arguments text. */
export function describeCall(name: string, argumentsText: string): string {
  let args: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(argumentsText || "{}");
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      args = parsed as Record<string, unknown>;
    }
  } catch {
    return clip(name, ACTIVITY_MAX);
  }
  if (name === "wait") {
    const from = Array.isArray(args.from_agents) ? args.from_agents.length : 0;
    if (args.timeout === 0) return "wait: checking mail";
    return from > 0 ? `waiting for ${from} agent${from === 1 ? "" : "s"}` : "waiting for mail";
  }
  const key = ["command", "path", "pattern", "name", "to", "agent_id"].find(
    (k) => typeof args[k] === "string",
  );
  const detail = key ? (args[key] as string) : "";
  return clip(detail ? `${name}: ${detail}` : name, ACTIVITY_MAX);
}

/** The activity line of several tool calls running at once. */
export function summarizeActivities(running: string[]): string | null {
  if (running.length === 0) return null;
  return running.length === 1 ? running[0]! : `${running[0]} (+${running.length - 1} more)`;
}

export interface WaitStatusWriter {
  /**
   * Records the per-agent fan-in state when it changed (message bodies are never stored);
   * `stored`: the fan-in's look wrote it already (wait.ts storeStatus), so this only notes it.
   */
  progress(entries: readonly WaitStatusEntry[], stored?: boolean): void;
  /** Clears the status (the wait ended) once earlier writes are done. */
  clear(): Promise<void>;
}

export function createWaitStatusWriter(db: Db, agentId: string, fence?: Fence): WaitStatusWriter {
  let shown = "null";
  let chain: Promise<void> = Promise.resolve();
  const write = (json: string) => {
    chain = chain
      .then(() =>
        db.execute(sql`update agents set wait_status = nullif(${json}::jsonb, 'null'::jsonb),
                                         ${epochSet(fence)}
                where id = ${agentId}`),
      )
      .then(
        () => undefined,
        () => undefined,
      );
  };
  return {
    progress(entries, stored = false) {
      const value = entries.map(({ agent_id, name, status }) => ({ agent_id, name, status }));
      const json = JSON.stringify(value);
      if (json === shown) return;
      shown = json;
      if (!stored) write(json);
    },
    async clear() {
      if (shown !== "null") {
        shown = "null";
        write("null");
      }
      await chain;
    },
  };
}
