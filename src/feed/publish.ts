// What the turn loop publishes for feeds besides events: the coalesced partial text of a streaming
// model response (agent_streams), the agent's `activity` and the live `wait_status` of a fan-in.
// Every write here is best effort: a failed write is dropped, never thrown into the turn — except
// a write refused for a stale lease epoch, which stops the turn (see createStreamPublisher).
import { sql, type SQL } from "drizzle-orm";
import type { WaitStatusEntry } from "../agents/agents.sql.js";
import { isLeaseLost, LeaseLost, type Fence } from "../agents/errors.js";
import { treeChannel } from "../bus/channels.js";
import type { Db, Queryable } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";

/** At most one stream write per this many ms per agent (~20 per second). */
export const STREAM_INTERVAL_MS = 50;

// $6: the turn's lease epoch (null: not leased). A stale one writes nothing and says so (held).
const PUBLISH_STREAM: Prepared = {
  name: "warren_publish_stream",
  text: `
    with f as (
      select $6::bigint is null
          or exists (select 1 from agents where id = $1::uuid and lease_epoch = $6::bigint) as held
    ), w as (
      select 1 from feed_watchers
       where tree_id = $5::uuid and expires_at > now() and $1::uuid = any(streams)
         and (select held from f)
       limit 1
    ), u as (
      insert into agent_streams as s (agent_id, tree_id, text, reasoning, live, updated_at)
      select $1::uuid, $5::uuid, $2::text, $3::text, true, now() from w
      on conflict (agent_id) do update
         set text = excluded.text, reasoning = excluded.reasoning, live = true, updated_at = now()
      returning agent_id
    ), n as (
      select pg_notify($4::text, 's:' || agent_id::text) from u
    )
    select (select held from f) as held, (select count(*) from n)::int as notified`,
};

/** `lease_epoch = <the turn's epoch>` for a turn's update of its own row: the agents_fence
 * trigger refuses it once a claim has raised the epoch. Without a fence, the column stays. */
export function epochSet(fence: Fence | undefined): SQL {
  return fence ? sql`lease_epoch = ${fence.epoch}` : sql`lease_epoch = lease_epoch`;
}

export interface StreamPublisher {
  onText(delta: string): void;
  onReasoning(delta: string): void;
  /** Stops publishing and waits for a write in flight; call before `endStream`. */
  settle(): Promise<void>;
}

/**
 * Coalesces a response's deltas into at most one write per `intervalMs`; each write carries the
 * whole text so far (a reader never needs the earlier writes). Nothing is stored for a tree that
 * no feed watches (see feed_watchers).
 */
export function createStreamPublisher(
  db: Db,
  agent: { id: string; tree_id: string },
  options: { fence?: Fence; onFenced?: () => void; intervalMs?: number } = {},
): StreamPublisher {
  const intervalMs = options.intervalMs ?? STREAM_INTERVAL_MS;
  const epoch = options.fence?.epoch ?? null;
  let text = "";
  let reasoning = "";
  let dirty = false;
  let settled = false;
  let last = 0;
  let timer: NodeJS.Timeout | undefined;
  let inflight: Promise<void> | undefined;
  const channel = treeChannel(agent.tree_id);

  const flush = () => {
    timer = undefined;
    if (!dirty || settled) return;
    dirty = false;
    last = Date.now();
    inflight = runPrepared<{ held: boolean }>(db, PUBLISH_STREAM, [
      agent.id,
      text,
      reasoning,
      channel,
      agent.tree_id,
      epoch,
    ])
      .then(
        ([row]) => {
          // Another worker claimed the agent: this model call is abandoned at once.
          if (row && !row.held) options.onFenced?.();
        },
        () => undefined, // dropped: the next write (or the assistant event) carries everything
      )
      .finally(() => {
        inflight = undefined;
        if (dirty) schedule();
      });
  };
  const schedule = () => {
    if (timer || inflight || settled) return;
    timer = setTimeout(flush, Math.max(0, last + intervalMs - Date.now()));
  };
  return {
    onText(delta) {
      text += delta;
      dirty = true;
      schedule();
    },
    onReasoning(delta) {
      reasoning += delta;
      dirty = true;
      schedule();
    },
    async settle() {
      settled = true;
      clearTimeout(timer);
      await inflight;
    },
  };
}

/** Marks the agent's stream ended (live = false), in the caller's transaction when given one. */
export async function endStream(q: Queryable, agent: { id: string; tree_id: string }) {
  await q.execute(sql`
    with u as (
      update agent_streams set live = false, updated_at = now()
       where agent_id = ${agent.id} and live
      returning agent_id
    )
    select pg_notify(${treeChannel(agent.tree_id)}, 's:' || agent_id::text) from u`);
}

/**
 * Sets what the agent is doing now ("thinking", "bash: npm test", …) while it is busy. Fenced by
 * the turn's epoch: refused, it throws LeaseLost; any other failure is dropped.
 */
export async function setActivity(db: Db, agentId: string, activity: string | null, fence?: Fence) {
  // With a fence the statement also says whether the lease is still held, whatever the state:
  // a worker whose agent was taken over (and perhaps finished) learns it here, before it asks
  // the model, even when there is no row to update.
  const holds = fence
    ? sql`lease_owner is not distinct from ${fence.owner} and lease_epoch = ${fence.epoch}`
    : sql`true`;
  const held = await db
    .execute<{ held: boolean }>(
      sql`with a as (
            select ${holds} as held from agents where id = ${agentId}
          ), u as (
            update agents set activity = ${activity}, ${epochSet(fence)}
             where id = ${agentId} and state in ('running', 'waiting')
               and activity is distinct from ${activity} and (select held from a)
            returning 1
          )
          select coalesce((select held from a), false) as held, (select count(*) from u) as n`,
    )
    .then(
      (result) => result.rows[0]?.held !== false,
      // Refused for a stale epoch: lost. Any other failure: the line is cosmetic, dropped.
      (err: unknown) => !isLeaseLost(err),
    );
  if (fence && !held) throw new LeaseLost(agentId);
}

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
  /** Records the per-agent fan-in state when it changed (message bodies are never stored). */
  progress(entries: readonly WaitStatusEntry[]): void;
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
    progress(entries) {
      const value = entries.map(({ agent_id, name, status }) => ({ agent_id, name, status }));
      const json = JSON.stringify(value);
      if (json === shown) return;
      shown = json;
      write(json);
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
