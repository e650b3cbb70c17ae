// The agent tree: create a root, fork a child (within limits), change state, kill a subtree, reap.
import { randomUUID } from "node:crypto";
import { and, asc, desc, eq, isNull, sql } from "drizzle-orm";
import type { Db, Queryable } from "../db/client.js";
import { agentChannel, notify, WORK_CHANNEL } from "../bus/channels.js";
import { escapeLine } from "../text/escape.js";
import { agents, type AgentRow, type AgentState, type Budget } from "./agents.sql.js";
import { events } from "./events.sql.js";
import { appendEvent, countedCte } from "./events.js";
import { AgentError, LeaseLost, type Fence } from "./errors.js";
import { DEFAULT_LIMITS, type Limits } from "./limits.js";
import type { ResultStamp } from "./event-keys.js";
import type { ApproveMode, Policy } from "../config/policy.js";
import { displayName, getAgent } from "./refs.js";
import { lockAgents } from "./lock-order.js";
import { scrubText, validateName, validateText } from "./text.js";
import { rowFromJson } from "../db/json-row.js";
import { runPrepared, type Prepared } from "../db/prepared.js";

export interface NewAgent {
  name?: string;
  /** The first user message; an agent with one starts `running`, without one it is `idle`. */
  prompt?: string;
  systemPrompt?: string | null;
  model?: string | null;
  profile?: string | null;
  cwd?: string | null;
  budget?: Budget;
  /** A root only: how its tree answers tool calls the policy marks `ask`. */
  approve?: ApproveMode;
  /** Tool policies that narrow the config's (a profile's); a fork adds them to its parent's. */
  policy?: Policy[];
}

export interface ForkOptions extends NewAgent {
  name: string;
  context?: "inherit" | "fresh";
  /** With `inherit`: the child sees the parent's events with smaller ids (default: all so far). */
  inheritUntilEvent?: number;
}

export { validateName } from "./text.js";

/** Checks the stored texts of a new agent before any row is written (SPEC §2). */
function validateNewAgent(options: NewAgent): void {
  if (options.prompt !== undefined) validateText(options.prompt, "prompt");
  if (options.systemPrompt) validateText(options.systemPrompt, "system prompt");
  if (options.profile) validateText(options.profile, "profile");
  if (options.model) validateText(options.model, "model");
}

export async function createTree(db: Db, options: NewAgent = {}): Promise<AgentRow> {
  const id = randomUUID();
  validateNewAgent(options);
  return db.transaction(async (tx) => {
    const [root] = await tx
      .insert(agents)
      .values({
        id,
        tree_id: id,
        name: options.name ? validateName(options.name) : "root",
        state: options.prompt ? "running" : "idle",
        system_prompt: options.systemPrompt ?? null,
        model: options.model ?? null,
        profile: options.profile ?? null,
        cwd: options.cwd ?? null,
        budget: options.budget ?? {},
        approve: options.approve ?? null,
        policy: options.policy ?? [],
      })
      .returning();
    if (options.prompt) await startWith(tx, id, options.prompt);
    return root!;
  });
}

async function startWith(tx: Queryable, agentId: string, prompt: string): Promise<void> {
  await appendEvent(tx, agentId, "user", prompt);
  await notify(tx, WORK_CHANNEL, agentId);
}

export async function forkAgent(
  db: Db,
  parentId: string,
  options: ForkOptions,
  limits: Limits = DEFAULT_LIMITS,
): Promise<AgentRow> {
  validateName(options.name);
  validateNewAgent(options);
  return db.transaction(async (tx) => (await forkAgentIn(tx, parentId, options, limits)).child);
}

/**
 * forkAgent inside the caller's transaction (a fenced tool effect records its result in the same
 * one). Locks the tree's root, then the parent (lock-order.ts); with `leaseOwner`, the parent's
 * lease must still be held by that worker, else LeaseLost. Two statements hold the root: the
 * lock, then the checks, the child, its task and the parent's `fork` line in one.
 */
export async function forkAgentIn(
  tx: Queryable,
  parentId: string,
  options: ForkOptions & { leaseOwner?: string; treeId?: string },
  limits: Limits = DEFAULT_LIMITS,
  /** A fork tool call: its `tool_result` (and count) is written by the same statement. */
  record?: ResultStamp,
): Promise<ForkMade> {
  const name = validateName(options.name);
  validateNewAgent(options);
  const treeId = options.treeId ?? (await getAgent(tx, parentId))?.tree_id;
  if (!treeId) throw new AgentError("UNKNOWN_AGENT", `no agent ${parentId}`);
  // The root first: it serialises forks and kills within a tree, so the counts below cannot
  // race and a kill of the parent either sees this child or is seen by this fork. `no key
  // update` conflicts with itself (forks) and with kill's `for update`, but not with the `key
  // share` of a send to the root: a fan-in's children reporting do not queue behind its forks.
  const locked = await lockAgents(tx, [treeId, parentId], "no key update");
  const parent = locked.find((r) => r.id === parentId);
  if (!parent || parent.tree_id !== treeId) {
    throw new AgentError("UNKNOWN_AGENT", `no agent ${parentId}`);
  }
  if (options.leaseOwner !== undefined && parent.lease_owner !== options.leaseOwner) {
    throw new LeaseLost(parentId);
  }
  if (parent.state === "dead") {
    throw new AgentError("AGENT_DEAD", `${displayName(parent)} is dead`);
  }
  if (parent.depth + 1 > limits.maxDepth) {
    throw new AgentError(
      "LIMIT_EXCEEDED",
      `depth limit reached: agents may be at most ${limits.maxDepth} levels below the root`,
    );
  }
  const inherit = (options.context ?? "inherit") === "inherit";
  const cutoff = inherit
    ? (options.inheritUntilEvent ?? (await nextEventBound(tx, parent.id)))
    : null;
  const prompt = options.prompt === undefined ? null : scrubText(options.prompt);
  // A statement of its own after the lock: its snapshot then holds every fork committed before
  // (a statement waiting for a lock re-reads only the locked row). The child is inserted only
  // when the counts allow it; the counts say which limit refused it.
  const [made] = await runPrepared<
    ForkCounts & {
      child: Record<string, unknown> | null;
      event_id: string | null;
      content: string | null;
    }
  >(tx, record ? FORK_RECORDED : FORK, [
    parent.id,
    treeId,
    name,
    limits.maxChildren,
    limits.maxAgentsPerTree,
    prompt,
    options.systemPrompt ?? null,
    options.model ?? null,
    options.profile ?? null,
    options.cwd ?? null,
    JSON.stringify(options.budget ?? {}),
    inherit ? "inherit" : "fresh",
    cutoff,
    JSON.stringify(options.policy ?? []),
    ...(record
      ? [
          record.key,
          record.epoch,
          JSON.stringify({ tool_call_id: record.toolCallId, name: "fork" }),
        ]
      : []),
  ]);
  const counts = made!;
  if (!counts.child) throw forkRefused(parent, name, counts, limits);
  return {
    child: rowFromJson(agents, counts.child),
    ...(counts.event_id === null
      ? {}
      : { result: { eventId: Number(counts.event_id), content: counts.content! } }),
  };
}

export interface ForkMade {
  child: AgentRow;
  /** With a ResultStamp: the call's `tool_result` event and its content (what the model reads). */
  result?: { eventId: number; content: string };
}

/**
 * The checks, the child, its task and wake-up, and the parent's `fork` line. $1 parent, $2 tree,
 * $3 name, $4 max children, $5 max living agents, $6 prompt (null: idle), $7 system prompt,
 * $8 model, $9 profile, $10 cwd, $11 budget, $12 context mode, $13 inherited cutoff, $14 policy.
 */
const forkText = (record: boolean) => `with c as (
      select count(*) filter (where parent_id = $1::uuid)::int as children,
             count(*)::int as living,
             count(*) filter (where parent_id = $1::uuid and name = $3::text)::int as twins
        from agents where tree_id = $2::uuid and state <> 'dead'
    ), p as (
      select id, tree_id, depth, model, cwd, policy from agents, c
       where id = $1::uuid and c.twins = 0 and c.children < $4::int and c.living < $5::int
    ), child as (
      insert into agents (tree_id, parent_id, name, depth, state, system_prompt, model, profile,
                          cwd, budget, context_mode, context_parent_event, policy)
      select p.tree_id, p.id, $3::text, p.depth + 1,
             case when $6::text is null then 'idle' else 'running' end, $7::text,
             coalesce($8::text, p.model), $9::text, coalesce($10::text, p.cwd), $11::jsonb,
             $12::text, $13::bigint,
             -- Narrowed, never widened: the parent's policies, then the child's own (its profile's).
             p.policy || $14::jsonb
        from p
      returning *
    ), forked as (
      insert into events (agent_id, tree_id, kind, content, data)
      select p.id, p.tree_id, 'fork', 'forked ' || child.name || ' ' || left(child.id::text, 8),
             jsonb_build_object('agent_id', child.id, 'name', child.name)
        from child, p
    ), task as (
      insert into events (agent_id, tree_id, kind, content)
      select child.id, child.tree_id, 'user', $6::text from child where $6::text is not null
    ), woken as (
      select pg_notify('${WORK_CHANNEL}', child.id::text) from child where $6::text is not null
    )${
      record
        ? `, ${countedCte("$1", "$16", "exists (select 1 from child)")}, result as (
      -- The same text as JSON.stringify({agent_id, name}). $15 key, $16 epoch, $17 data.
      insert into events (agent_id, tree_id, kind, content, data, key, epoch)
      select $1::uuid, $2::uuid, 'tool_result',
             '{"agent_id":' || to_json(child.id::text)::text || ',"name":' || to_json(child.name)::text || '}',
             $17::jsonb, $15::text, $16::bigint
        from child
      returning id, content
    )`
        : ""
    }
    select c.children, c.living, c.twins, (select to_jsonb(child) from child) as child,
           (select count(*) from woken) as woken,
           ${record ? "(select id from result)" : "null::bigint"} as event_id,
           ${record ? "(select content from result)" : "null::text"} as content
      from c`;

const FORK: Prepared = { name: "warren_fork", text: forkText(false) };
const FORK_RECORDED: Prepared = { name: "warren_fork_recorded", text: forkText(true) };

type ForkCounts = {
  children: number;
  living: number;
  twins: number;
};

/** Why the counts refused a fork (SPEC §2: names unique among living children; the limits). */
function forkRefused(
  parent: { id: string; name: string },
  name: string,
  counts: ForkCounts,
  limits: Limits,
): AgentError {
  if (counts.twins > 0) {
    return new AgentError(
      "INVALID_ARGS",
      `${displayName(parent)} already has a living child named "${escapeLine(name)}"; choose another name`,
    );
  }
  if (counts.children >= limits.maxChildren) {
    return new AgentError(
      "LIMIT_EXCEEDED",
      `${displayName(parent)} already has ${counts.children} living children (limit ${limits.maxChildren})`,
    );
  }
  return new AgentError(
    "LIMIT_EXCEEDED",
    `the tree already has ${counts.living} living agents (limit ${limits.maxAgentsPerTree})`,
  );
}

async function nextEventBound(tx: Queryable, agentId: string): Promise<number> {
  const [row] = await tx
    .select({ id: events.id })
    .from(events)
    .where(eq(events.agent_id, agentId))
    .orderBy(desc(events.id))
    .limit(1);
  return (row?.id ?? 0) + 1;
}

/** Changes a living agent's state and tells its listeners. Returns false if it is dead or gone. */
export async function setState(
  q: Queryable,
  agentId: string,
  state: AgentState,
  /** A turn's own change: refused by the database once its epoch is stale. */
  fence?: Fence,
): Promise<boolean> {
  const rows = await q
    .update(agents)
    .set({ state, last_activity_at: sql`now()`, ...(fence ? { lease_epoch: fence.epoch } : {}) })
    .where(and(eq(agents.id, agentId), sql`${agents.state} <> 'dead'`))
    .returning({ id: agents.id });
  if (rows.length === 0) return false;
  await notify(q, agentChannel(agentId), "state");
  if (state === "running") await notify(q, WORK_CHANNEL, agentId);
  return true;
}

/** Is `ancestorId` a strict ancestor of `agentId`? */
export async function isAncestor(q: Queryable, ancestorId: string, agentId: string) {
  const result = await q.execute<{ found: boolean }>(sql`
    with recursive up as (
      select parent_id from agents where id = ${agentId}
      union all
      select a.parent_id from agents a join up on a.id = up.parent_id
    )
    select exists(select 1 from up where parent_id = ${ancestorId}) as found`);
  return result.rows[0]?.found === true;
}

export interface KillRequest {
  targetId: string;
  /** The agent asking, or null for the person (who may kill any agent but the root). */
  byAgentId: string | null;
  reason?: string;
}

/**
 * Kills the target and every living descendant: marks them dead, records a `killed` event each
 * and notifies their channels (their workers then stop model streams and tools at once).
 * Returns the ids killed, target first.
 */
export async function killAgent(db: Db, request: KillRequest): Promise<string[]> {
  return db.transaction((tx) => killAgentIn(tx, request));
}

/**
 * killAgent inside the caller's transaction. Lock order (lock-order.ts): the tree's root first —
 * forks take it too, so the subtree read under it holds every child committed before, and a fork
 * waiting for it then finds its parent dead: no living orphan. Then the victims and the killer,
 * in order. With `leaseOwner`, the killer's lease must still be held by that worker (LeaseLost).
 */
export async function killAgentIn(
  tx: Queryable,
  request: KillRequest & { leaseOwner?: string },
): Promise<string[]> {
  const known = await getAgent(tx, request.targetId);
  if (!known) throw new AgentError("UNKNOWN_AGENT", `no agent ${request.targetId}`);
  await tx.execute(sql`select 1 from agents where id = ${known.tree_id} for update`);
  const target = (await getAgent(tx, request.targetId))!;
  if (target.state === "dead")
    throw new AgentError("AGENT_DEAD", `${displayName(target)} is already dead`);
  if (target.parent_id === null)
    throw new AgentError("NOT_ALLOWED", "the root agent cannot be killed");
  if (request.byAgentId !== null) {
    if (request.byAgentId === target.id) {
      throw new AgentError("NOT_ALLOWED", "an agent cannot kill itself; end your turn instead");
    }
    if (!(await isAncestor(tx, request.byAgentId, target.id))) {
      throw new AgentError(
        "NOT_ALLOWED",
        `you may only kill your own descendants, not ${displayName(target)}`,
      );
    }
  }
  const sub = await tx.execute<{ id: string; level: number; state: string }>(sql`
    with recursive sub as (
      select id, state, 0 as level, created_at from agents where id = ${target.id}
      union all
      select a.id, a.state, sub.level + 1, a.created_at
        from agents a join sub on a.parent_id = sub.id
    )
    select id, state, level from sub order by level, created_at, id`);
  const living = sub.rows.filter((r) => r.state !== "dead").map((r) => r.id);
  const locked = await lockAgents(
    tx,
    [...living, ...(request.byAgentId ? [request.byAgentId] : [])],
    "update",
  );
  const killer = locked.find((r) => r.id === request.byAgentId);
  if (request.leaseOwner !== undefined && request.byAgentId !== null) {
    if (killer?.lease_owner !== request.leaseOwner) throw new LeaseLost(request.byAgentId);
  }
  const updated = await tx.execute<{ id: string }>(sql`
    update agents set state = 'dead', ended_at = now(), last_activity_at = now(),
                      activity = null, wait_status = null
     where id = any(${sql.param(living)}::uuid[]) and state <> 'dead'
    returning id`);
  const dead = new Set(updated.rows.map((r) => r.id));
  const ids = living.filter((id) => dead.has(id));
  if (ids.length === 0) return ids;
  const by = killer ? displayName(killer) : request.byAgentId ? "an agent" : "the person";
  await tx.insert(events).values(
    ids.map((id) => ({
      agent_id: id,
      kind: "killed" as const,
      content: id === target.id ? `killed by ${by}` : `killed with ancestor ${displayName(target)}`,
      data: { by: request.byAgentId, target: target.id, reason: request.reason ?? null },
    })),
  );
  await tx.execute(sql`
    select pg_notify('agent_event_' || id, 'dead') from unnest(${sql.param(ids)}::uuid[]) as t(id)`);
  return ids;
}

/** Removes dead agents from navigation (their history stays). Returns the ids reaped. */
export async function reapDead(db: Db, treeId: string): Promise<string[]> {
  const rows = await db
    .update(agents)
    .set({ reaped_at: sql`now()` })
    .where(and(eq(agents.tree_id, treeId), eq(agents.state, "dead"), isNull(agents.reaped_at)))
    .returning({ id: agents.id });
  return rows.map((r) => r.id);
}

/** Every agent of a tree, oldest first (reaped ones included only when asked). */
export async function listTree(
  q: Queryable,
  treeId: string,
  options: { includeReaped?: boolean } = {},
): Promise<AgentRow[]> {
  return q
    .select()
    .from(agents)
    .where(
      and(eq(agents.tree_id, treeId), options.includeReaped ? undefined : isNull(agents.reaped_at)),
    )
    .orderBy(asc(agents.created_at), asc(agents.id));
}

/** The most recently active tree's root, if any. */
export async function latestRoot(q: Queryable): Promise<AgentRow | undefined> {
  const [row] = await q
    .select()
    .from(agents)
    .where(isNull(agents.parent_id))
    .orderBy(desc(agents.last_activity_at))
    .limit(1);
  return row;
}
