// The agent tree: create a root, fork a child (within limits), change state, kill a subtree, reap.
import { randomUUID } from "node:crypto";
import { and, asc, desc, eq, isNull, sql } from "drizzle-orm";
import type { Db, Queryable } from "../db/client.js";
import { agentChannel, notify, stopNotifiesSql, WORK_CHANNEL } from "../bus/channels.js";
import { escapeLine } from "../text/escape.js";
import {
  agents,
  type AgentRow,
  type AgentState,
  type Budget,
  type StoredCaps,
  type WorktreeInfo,
} from "./agents.sql.js";
import { events } from "./events.sql.js";
import { sweepReaped } from "./worktree-ops.js";
import { commonDirOf } from "./repository.js";
import { appendEvent } from "./events.js";
import { AgentError, LeaseLost, type Fence } from "./errors.js";
import { DEFAULT_LIMITS, type Limits } from "./limits.js";
import type { ResultStamp } from "./event-keys.js";
import type { ApproveMode, Policy } from "../policy/policy.js";
import { displayName, getAgent, isUuid } from "./refs.js";
import { lockAgents } from "./lock-order.js";
import { scrubText, validateName, validateText } from "./text.js";
import { lookalikeRefusals } from "./names.js";
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
  /** A fork's capabilities, from childCapabilities (capabilities.ts); a root has none. */
  caps?: StoredCaps;
}

export interface ForkOptions extends NewAgent {
  name: string;
  context?: "inherit" | "fresh";
  /** With `inherit`: the child sees the parent's events with smaller ids (default: all so far). */
  inheritUntilEvent?: number;
  /** The child's id, decided before (an isolated child's worktree is named from it). */
  id?: string;
  /** An isolated child's worktree, made before the fork (worktree.ts); it is also its `cwd`. */
  worktree?: WorktreeInfo | null;
}

export { validateName } from "./text.js";

/** Checks the stored texts of a new agent before any row is written (SPEC §2). */
function validateNewAgent(options: NewAgent): void {
  if (options.prompt !== undefined) validateText(options.prompt, "prompt");
  if (options.systemPrompt) validateText(options.systemPrompt, "system prompt");
  if (options.profile) validateText(options.profile, "profile");
  if (options.model) validateText(options.model, "model");
}

/**
 * Starts a tree: its root, working in `options.cwd`. The repository that directory is in (its
 * common git directory, real) is recorded on the root: warren's git runs in no other for this
 * tree (src/agents/repository.ts).
 */
export async function createTree(db: Db, options: NewAgent = {}): Promise<AgentRow> {
  const id = randomUUID();
  validateNewAgent(options);
  const repository = options.cwd ? await commonDirOf(options.cwd) : null;
  return db.transaction(async (tx) => {
    const [root] = await tx
      .insert(agents)
      .values({
        id,
        tree_id: id,
        name: options.name ? validateName(options.name, { root: true }) : "root",
        state: options.prompt ? "running" : "idle",
        system_prompt: options.systemPrompt ?? null,
        model: options.model ?? null,
        profile: options.profile ?? null,
        cwd: options.cwd ?? null,
        budget: options.budget ?? {},
        approve: options.approve ?? null,
        policy: options.policy ?? [],
        repository,
      })
      .returning();
    if (options.prompt) await startWith(tx, id, options.prompt);
    return root!;
  });
}

/** The repository a tree recorded when it started (its root's), null outside one. */
export async function treeRepository(
  q: Queryable,
  agent: Pick<AgentRow, "id" | "tree_id" | "repository">,
): Promise<string | null> {
  if (agent.id === agent.tree_id) return agent.repository;
  const rows = await q.execute<{ repository: string | null }>(
    sql`select repository from agents where id = ${agent.tree_id}::uuid`,
  );
  return rows.rows[0]?.repository ?? null;
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
  return (await forkAgentIn(db, parentId, options, limits)).child;
}

/**
 * A fork in one call of warren_fork_batch (migrations/0015_fork_batch.sql), on the pool (its own
 * transaction) or in the caller's transaction. It locks the tree's root, then the parent
 * (lock-order.ts); with `leaseOwner`, the parent's lease must still be held by that worker, else
 * LeaseLost. Then, in a command of its own, the checks, the child, its task and the parent's
 * `fork` line: the root's lock serialises forks and kills within a tree, and that command's
 * snapshot, taken after the lock's wait, holds every fork committed before it (one statement's
 * would predate the wait and miss them), so the counts cannot race, and a kill of the parent
 * either sees this child or is seen by this fork. The lock is `no key update`: it conflicts
 * with itself (forks) and with kill's `for update`, but not with the `key share` of a send to
 * the root, so a fan-in's children reporting do not queue behind its forks.
 */
export async function forkAgentIn(
  q: Queryable,
  parentId: string,
  options: SharedForkOptions & ForkOptions,
  limits: Limits = DEFAULT_LIMITS,
): Promise<ForkMade> {
  const fork = checkedFork(parentId, options);
  const [refused] = await lookalikeRefusals(q, parentId, [fork.name]);
  if (refused) throw refused;
  const [made] = await runForks(q, parentId, options, limits, [fork]);
  return forkMade(parentId, fork.name, options, limits, made);
}

/** What the forks of one statement share: the lease that makes them, the tree. */
export interface SharedForkOptions {
  leaseOwner?: string;
  treeId?: string;
}

/** One fork of a batch, checked (checkedFork); with `record`, a fork tool call's. */
export interface CheckedFork {
  options: ForkOptions;
  name: string;
  prompt: string | null;
  record?: ResultStamp;
}

/** What warren_fork_batch returns for each fork, in the order given (`ord` from 1). */
export type BatchRow = ForkRow & { ord: number; recorded: boolean };

/**
 * Forks `forks` of one parent in one statement, each in a command of its own after the locks
 * (see forkAgentIn), one row each. A fork whose `record` key an earlier attempt recorded makes
 * nothing and comes back `recorded`, with that result.
 */
export function runForks(
  q: Queryable,
  parentId: string,
  shared: SharedForkOptions,
  limits: Limits,
  forks: CheckedFork[],
): Promise<BatchRow[]> {
  const items = forks.map(({ options, name, prompt, record }) => ({
    name,
    prompt,
    system_prompt: options.systemPrompt ?? null,
    model: options.model ?? null,
    profile: options.profile ?? null,
    cwd: options.cwd ?? null,
    budget: options.budget ?? {},
    context: (options.context ?? "inherit") === "inherit" ? "inherit" : "fresh",
    cutoff: options.inheritUntilEvent ?? null,
    policy: options.policy ?? [],
    caps: options.caps ?? null,
    id: options.id ?? null,
    worktree: options.worktree ?? null,
    key: record?.key ?? null,
    // With a traceparent, the result's insert stores it on the child too (migration 0031).
    data: record
      ? {
          tool_call_id: record.toolCallId,
          name: "fork",
          ...(record.traceparent !== undefined && { traceparent: record.traceparent }),
        }
      : null,
  }));
  // One epoch for the batch: its forks are one turn's (fork-batch.ts gathers by epoch).
  const epoch = forks.find((f) => f.record)?.record?.epoch ?? null;
  return runPrepared<BatchRow>(q, FORK_BATCH, [
    parentId,
    shared.treeId ?? null,
    limits.maxChildren,
    limits.maxAgentsPerTree,
    limits.maxDepth,
    shared.leaseOwner ?? null,
    epoch,
    JSON.stringify(items),
  ]);
}

/** A fork with its name and task as stored, once its texts pass the checks (SPEC §2); else throws. */
export function checkedFork(
  parentId: string,
  options: ForkOptions,
  record?: ResultStamp,
): CheckedFork {
  const name = validateName(options.name);
  validateNewAgent(options);
  if (!isUuid(parentId)) throw new AgentError("UNKNOWN_AGENT", `no agent ${parentId}`);
  const prompt = options.prompt === undefined ? null : scrubText(options.prompt);
  return { options, name, prompt, ...(record ? { record } : {}) };
}

/** What a fork's row says: the fork made, or why it was refused (thrown). */
export function forkMade(
  parentId: string,
  name: string,
  shared: SharedForkOptions,
  limits: Limits,
  made: ForkRow | undefined,
): ForkMade {
  if (!made?.known) throw new AgentError("UNKNOWN_AGENT", `no agent ${parentId}`);
  // As the row spells its id (the argument may be upper-case), for displayName.
  const parent = { id: parentId.toLowerCase(), name: made.parent_name };
  if (shared.leaseOwner !== undefined && made.parent_lease_owner !== shared.leaseOwner) {
    throw new LeaseLost(parentId);
  }
  if (made.parent_state === "dead") {
    throw new AgentError("AGENT_DEAD", `${displayName(parent)} is dead`);
  }
  if (made.parent_depth + 1 > limits.maxDepth) {
    throw new AgentError(
      "LIMIT_EXCEEDED",
      `depth limit reached: agents may be at most ${limits.maxDepth} levels below the root`,
    );
  }
  if (!made.child_row) throw forkRefused(parent, name, made, limits);
  return {
    child: rowFromJson(agents, made.child_row),
    ...(made.event_id === null
      ? {}
      : { result: { eventId: Number(made.event_id), content: made.result_text! } }),
  };
}

export interface ForkMade {
  child: AgentRow;
  /** With a ResultStamp: the call's `tool_result` event and its content (what the model reads). */
  result?: { eventId: number; content: string };
}

/** A fork's row: the parent's row as the checks read it, the counts, what it made. */
type ForkRow = ForkCounts & {
  known: boolean;
  parent_name: string;
  parent_state: string;
  parent_depth: number;
  parent_lease_owner: string | null;
  child_row: Record<string, unknown> | null;
  event_id: string | null;
  result_text: string | null;
};

/**
 * $1 parent, $2 tree (null: the parent's), $3 max children, $4 max living agents, $5 max depth,
 * $6 lease owner (null: none checked), $7 epoch, $8 the forks (see the migration).
 */
const FORK_BATCH: Prepared = {
  name: "warren_fork_batch",
  text: `select * from warren_fork_batch($1::uuid, $2::uuid, $3::int, $4::int, $5::int, $6::text,
           $7::bigint, $8::jsonb, '${WORK_CHANNEL}')`,
};

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
  // A kill revokes the lease: the epoch moves on, so whatever a killed turn still writes (a
  // `wait` that returned as the kill committed, a tool's result), stamped with its epoch, is
  // refused by the fence, and nothing lands after the `killed` event.
  const updated = await tx.execute<{ id: string }>(sql`
    update agents set state = 'dead', ended_at = now(), last_activity_at = now(),
                      activity = null, wait_status = null, lease_epoch = lease_epoch + 1
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
    select ${stopNotifiesSql(sql`id`, "dead")} from unnest(${sql.param(ids)}::uuid[]) as t(id)`);
  return ids;
}

/** Removes dead agents from navigation (their history stays). Returns the ids reaped. */
export async function reapDead(db: Db, treeId: string): Promise<string[]> {
  const rows = await db
    .update(agents)
    .set({ reaped_at: sql`now()` })
    .where(and(eq(agents.tree_id, treeId), eq(agents.state, "dead"), isNull(agents.reaped_at)))
    .returning({ id: agents.id });
  const ids = rows.map((r) => r.id);
  // Their worktrees: removed when nothing in them is unmerged, kept otherwise (issue 30).
  await sweepReaped(db, ids).catch(() => []);
  return ids;
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
    .orderBy(asc(agents.created_at), asc(agents.fork_seq), asc(agents.id));
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
