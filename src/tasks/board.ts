// The task board's statements (SPEC §3): add, claim, finish and list the tasks of one tree. Each
// runs inside the caller's transaction, after the caller's agent row is locked (lockCaller), so a
// claim or a completion commits with the tool call's keyed, fenced result or not at all. Lock
// order (lock-order.ts): the caller's agent row, then task rows (claimed with SKIP LOCKED).
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { AgentError, LeaseLost, type Fence } from "../agents/errors.js";
import type { Queryable } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import { countedCte } from "../agents/events.js";
import { HANDOFF_RESULT_BYTES } from "../mail/handoff.js";
import type { TaskState } from "./tasks.sql.js";

/**
 * The channel every change of a tree's tasks is told on: an update of a task's state by trigger
 * tasks_notify (migrations 0022, 0027), an add by ADD_TASK itself (`pending`, or a handed claim's
 * result: parseHandedResult).
 */
export function taskChannel(treeId: string): string {
  return `warren_tasks_${treeId}`;
}

/** What task_list and `warren tasks` show: a pending task behind a failed one is `blocked`. */
export type TaskShownState = TaskState | "blocked";

export type TaskEntry = {
  task_id: string;
  title: string;
  state: TaskShownState;
  claimed_by: string | null;
  /** The holder's (or finisher's) name, for people; task_list leaves it out. */
  claimed_by_name: string | null;
  result: string | null;
  depends_on: string[];
};

export interface ClaimedTask {
  task_id: string;
  title: string;
  detail: string | null;
  depends_on: { task_id: string; title: string; result: string | null }[];
}

/**
 * Locks the calling agent's row (FOR KEY SHARE: a kill's FOR UPDATE waits for this transaction,
 * so a task claimed here is released by the kill's trigger) and checks it is alive and, with a
 * fence, that the worker still holds its lease. Else LeaseLost (a stale worker writes nothing).
 */
export async function lockCaller(
  tx: Queryable,
  agentId: string,
  fence: Fence | undefined,
): Promise<void> {
  const rows = await tx.execute<{ held: boolean; state: string }>(sql`
    select state,
           (${fence?.owner ?? null}::text is null
            or (lease_owner is not distinct from ${fence?.owner ?? null}::text
                and lease_epoch = ${fence?.epoch ?? null}::bigint)) as held
      from agents where id = ${agentId} for key share`);
  const row = rows.rows[0];
  // Dead first: a kill also moves the epoch on (it revokes the lease), and says why.
  if (row?.state === "dead") throw new AgentError("AGENT_DEAD", "you are dead");
  if (!row?.held) throw new LeaseLost(agentId);
}

export interface NewTask {
  treeId: string;
  createdBy: string | null;
  title: string;
  detail?: string | null;
  dependsOn?: string[];
}

/**
 * Adds a task. Its dependencies must be tasks of the same tree; they exist before it does and
 * never change, so no cycle can form (a task can only depend on older ones).
 *
 * A task that is ready (every dependency done, and no older pending task ready) goes straight to
 * the claimer that has waited longest on this board (CLAIM_TASK registered it in task_waits), in
 * this statement: the claim's result is recorded under the claim call's key, the task goes in
 * claimed, and the result is NOTIFYed on the board's channel, so the claimer returns without a
 * statement of its own. events_key_idx keeps one result per call: a claim answered meanwhile
 * makes the handoff's insert do nothing, and the task goes in pending like any other. The
 * registration and the claimer's row are taken with SKIP LOCKED, so an add never waits for a
 * claimer mid-way through its own write (that claimer then finds the task itself).
 */
export async function addTask(q: Queryable, task: NewTask): Promise<string> {
  const deps = [...new Set(task.dependsOn ?? [])];
  const malformed = deps.filter((d) => !UUID.test(d));
  if (malformed.length) {
    throw new AgentError("INVALID_ARGS", `unknown task(s) in depends_on: ${malformed.join(", ")}`);
  }
  const statement = deps.length ? ADD_TASK : ADD_PLAIN_TASK;
  const [row] = await runPrepared<{ id: string | null; missing: string[] }>(q, statement, [
    task.treeId,
    task.createdBy,
    task.title,
    task.detail ?? null,
    deps,
    // Made here: gen_random_uuid() costs the statement more than the rest of the row's values.
    randomUUID(),
  ]);
  if (!row?.id) {
    throw new AgentError(
      "INVALID_ARGS",
      `unknown task(s) in depends_on (not on this tree's board): ${row?.missing.join(", ")}`,
    );
  }
  return row.id;
}

/**
 * A claimed task as its claimer's result: id, title, detail and each dependency's result, for the
 * row `t` (id, title, detail, depends_on). The claim (CLAIM_TASK) and a handoff (ADD_TASK) answer
 * alike.
 */
const CLAIMED_JSON = (t: string, deps = true) => `json_build_object(
  'task_id', ${t}.id::text, 'title', ${t}.title, 'detail', ${t}.detail,
  'depends_on', ${deps ? DEPS_JSON(t) : "'[]'::json"})`;

const DEPS_JSON = (t: string) => `coalesce(
    (select json_agg(json_build_object('task_id', u.id::text, 'title', d.title, 'result', d.result)
                     order by u.ord)
       from unnest(${t}.depends_on) with ordinality as u(id, ord),
            -- offset 0: looked up by key per dependency, never a hash join over the board
            lateral (select d.title, d.result from tasks d where d.id = u.id offset 0) d),
    '[]'::json)`;

/** Whether the tree $2 has a pending task whose dependencies are all done. */
const READY_EXISTS = (tree: string) => `exists (
  select 1 from tasks t
   where t.tree_id = ${tree} and t.state = 'pending'
     and not exists (select 1 from tasks d where d.id = any(t.depends_on) and d.state <> 'done'))`;

/**
 * The add's statement: $1 tree, $2 creator (null: the person), $3 title, $4 detail, $5
 * dependencies (uuid[]), $6 the new task's id. Two forms, one text: an add without dependencies
 * (`plain`) leaves out their lookups, which cost it about a sixth of its time.
 */
const addTaskText = (plain: boolean) => `
    with ${
      plain
        ? ""
        : `found as (
      -- Each dependency by its key (a scalar subquery is never planned as a scan of the board).
      select u.id, (select t.state from tasks t where t.id = u.id and t.tree_id = $1::uuid) as state
        from unnest($5::uuid[]) u(id)
    ), `
    }nt as (
      select $6::uuid as id, $3::text as title, $4::text as detail, $5::uuid[] as depends_on
      ${plain ? "" : "where not exists (select 1 from found where state is null)"}
    ), hw as (
      -- The claimer waiting longest whose lease is still the one it registered under; offset 0
      -- keeps its agent a lookup by key, never a scan of agents. (No index orders the board's
      -- registrations: registering and leaving stay HOT updates, which an index on key or
      -- registered_at would end, leaving a dead index entry per claim.)
      select w.agent_id, w.key, w.data, w.lease_owner, w.epoch from task_waits w
       where w.tree_id = $1::uuid and w.key is not null
         ${plain ? "" : "and not exists (select 1 from found where state is distinct from 'done')"}
         and not ${READY_EXISTS("$1::uuid")}
         and exists (select 1 from agents a
                      where a.id = w.agent_id and a.state <> 'dead'
                        and a.lease_owner is not distinct from w.lease_owner
                        and (w.epoch is null or w.epoch = a.lease_epoch) offset 0)
       order by w.registered_at
       limit 1
         for update of w skip locked
    ), hb as (
      -- Its row, locked as a lease's holder would (SKIP LOCKED: an add never waits for a
      -- claimer mid-way through its own write; that claimer then finds the task itself).
      select a.id from agents a join hw on a.id = hw.agent_id
       where a.state <> 'dead' and a.lease_owner is not distinct from hw.lease_owner
         and (hw.epoch is null or hw.epoch = a.lease_epoch)
         for no key update of a skip locked
    ), he as (
      insert into events (agent_id, tree_id, kind, content, data, key, epoch)
      select hw.agent_id, $1::uuid, 'tool_result', ${CLAIMED_JSON("nt", !plain)}::text, hw.data,
             hw.key, hw.epoch
        from hw, hb, nt
      on conflict (agent_id, key) where key is not null do nothing
      returning id, agent_id, key, epoch, content
    ), ${countedCte("(select agent_id from he)", "(select epoch from he)", "exists (select 1 from he)", "hk")},
    hg as (
      -- Taken, answered here or (the insert did nothing) by the claimer itself meanwhile.
      update task_waits w set key = null from hw
       where w.agent_id = hw.agent_id and w.key = hw.key and exists (select 1 from hb)
      returning 1
    ), ins as (
      insert into tasks (id, tree_id, title, detail, depends_on, created_by, state, claimed_by,
                         claim_key, claim_epoch, claimed_at)
      select nt.id, $1::uuid, nt.title, nt.detail, nt.depends_on, $2::uuid,
             case when he.agent_id is null then 'pending' else 'claimed' end, he.agent_id,
             he.agent_id::text || ':' || he.key, he.epoch, case when he.agent_id is not null then now() end
        from nt left join he on true
      returning id
    )
    select (select id::text from ins) as id,
           ${plain ? "'{}'::text[]" : "(select coalesce(array_agg(id::text), '{}') from found where state is null)"} as missing,
           -- The board's one NOTIFY for this add (the tasks_notify trigger tells updates only): the
           -- handed claim's result, for its claimer (and a change for every watcher), or \`pending\`.
           (select pg_notify('${taskChannel("")}' || $1::text, coalesce(
               -- The recorded content is JSON already: spliced in, not parsed and printed again.
               (select '{"key":' || to_json(he.key)::text || ',"event":' || he.id::text ||
                       case when octet_length(he.content) <= ${HANDOFF_RESULT_BYTES}
                            then ',"result":' || he.content else '' end || '}'
                  from he),
               'pending'))
              from ins) as told`;

const ADD_TASK: Prepared = { name: "warren_task_add", text: addTaskText(false) };
const ADD_PLAIN_TASK: Prepared = { name: "warren_task_add_plain", text: addTaskText(true) };

/**
 * The failed tasks of a tree and every pending task behind one, transitively (`bad`); with it,
 * whether anything is still open: a claimed task, or a pending one that is not blocked.
 */
const BLOCKED_CTE = (treeId: string) => sql`
  recursive bad(id) as (
    select id from tasks where tree_id = ${treeId} and state = 'failed'
    union
    select t.id from tasks t join bad on bad.id = any(t.depends_on)
     where t.tree_id = ${treeId} and t.state = 'pending'
  )`;

/**
 * What a claim answered: its recorded result; or nothing yet, either because others hold what it
 * may wait for, or (`contended`) because a ready task was there but locked by another claimer,
 * which may yet roll back without a NOTIFY: look again soon.
 */
export type ClaimAnswer = { eventId: number; content: string } | "contended" | undefined;

/**
 * Claims the oldest pending task of the tree whose dependencies are all done (SKIP LOCKED: two
 * claimers never take the same one, nor wait for each other) and records the call's keyed, fenced
 * `tool_result`, in one statement: the task with its dependencies' results, `{"status":"empty"}`
 * when nothing is open at all (no claimed task, no pending one that is not blocked), or, when
 * `final`, `{"status":"timeout"}`. Otherwise (others hold tasks that may yet make one claimable)
 * nothing is written and undefined returned, or "contended" when a ready task was skipped locked. The caller's lease is checked in it (LeaseLost,
 * AGENT_DEAD); a result recorded under the call's key already is the answer, and nothing is
 * claimed (a retry after a lost reply).
 */
export async function claimTask(
  q: Queryable,
  claim: {
    treeId: string;
    agentId: string;
    fence: Fence | undefined;
    /** The call's result key (event-keys.ts); the task's claim_key is made from it. */
    resultKey: string;
    toolCallId: string;
    final: boolean;
    /**
     * Nothing ready and about to block: register so that an add hands its task over (ADD_TASK).
     * Any other outcome, and any call without it, takes this call's registration out.
     */
    register: boolean;
  },
): Promise<ClaimAnswer> {
  const [row] = await runPrepared<{
    state: string | null;
    held: boolean | null;
    event_id: string | null;
    content: string | null;
    contended: boolean | null;
  }>(q, CLAIM_TASK, [
    claim.agentId,
    claim.treeId,
    `${claim.agentId}:${claim.resultKey}`,
    claim.fence?.owner ?? null,
    claim.fence?.epoch ?? null,
    claim.resultKey,
    claim.final,
    JSON.stringify({ tool_call_id: claim.toolCallId, name: "task_claim" }),
    claim.register,
  ]);
  if (row?.event_id) return { eventId: Number(row.event_id), content: row.content! };
  if (row?.state === "dead") throw new AgentError("AGENT_DEAD", "you are dead");
  if (!row?.held) throw new LeaseLost(claim.agentId);
  return row.contended ? "contended" : undefined;
}

/**
 * $1 agent, $2 tree, $3 claim key, $4 lease owner (null: unfenced), $5 lease epoch, $6 the call's
 * result key, $7 final (a timeout is the answer when nothing is claimable), $8 the result's data,
 * $9 register (nothing ready: blocking next, so register in task_waits).
 */
const CLAIM_TASK: Prepared = {
  name: "warren_task_claim",
  text: `
    with recursive caller as (
      select state, ($4::text is null
                     or (lease_owner is not distinct from $4::text and lease_epoch = $5::bigint))
                    as held
        from agents where id = $1::uuid for key share
    ), recorded as (
      select id, content from events where agent_id = $1::uuid and key = $6::text
    ), may as (
      select coalesce((select held and state <> 'dead' from caller), false)
             and not exists (select 1 from recorded) as ok
    ), pick as (
      select t.id from tasks t
       where t.tree_id = $2::uuid and t.state = 'pending' and (select ok from may)
         and not exists (select 1 from tasks d
                          where d.id = any(t.depends_on) and d.state <> 'done')
       order by t.created_at, t.id
       limit 1
       for update skip locked
    ), claimed as (
      update tasks set state = 'claimed', claimed_by = $1::uuid, claim_key = $3::text,
                       claim_epoch = $5::bigint, claimed_at = now()
        from pick
       where tasks.id = pick.id and tasks.state = 'pending'
      returning tasks.id, tasks.title, tasks.detail, tasks.depends_on
    ), bad(id) as (
      select id from tasks where tree_id = $2::uuid and state = 'failed'
      union
      select t.id from tasks t join bad on bad.id = any(t.depends_on)
       where t.tree_id = $2::uuid and t.state = 'pending'
    ), answer as (
      select coalesce(
        (select ${CLAIMED_JSON("g")}
           from claimed g),
        case when not exists (select 1 from tasks t
                               where t.tree_id = $2::uuid
                                 and (t.state = 'claimed'
                                      or (t.state = 'pending'
                                          and t.id not in (select id from bad))))
             then json_build_object('status', 'empty')
             when $7::boolean then json_build_object('status', 'timeout') end) as value
       where (select ok from may)
    ), unreg as (
      -- Answered (or answered already), or not about to block: no add may hand it a task now.
      -- Before e: a handoff to this call in flight holds the registration, so this waits for it,
      -- and e is then refused by the key (the caller reads the handed result) instead.
      update task_waits set key = null
       where agent_id = $1::uuid and key = $6::text
         and (not $9::boolean or exists (select 1 from recorded)
              or exists (select 1 from answer where value is not null))
      returning 1
    ), e as (
      insert into events (agent_id, kind, content, data, key, epoch)
      select $1::uuid, 'tool_result', value::text, $8::jsonb, $6::text, $5::bigint
        from answer where value is not null and (select count(*) from unreg) >= 0
      returning id, content
    ), reg as (
      -- Nothing ready and about to block: the next add of a ready task hands it over (ADD_TASK).
      insert into task_waits (agent_id, tree_id, key, data, lease_owner, epoch)
      select $1::uuid, $2::uuid, $6::text, $8::jsonb, $4::text, $5::bigint
       where $9::boolean and (select ok from may)
         and not exists (select 1 from answer where value is not null)
      on conflict (agent_id) do update
        set tree_id = excluded.tree_id, key = excluded.key, data = excluded.data,
            lease_owner = excluded.lease_owner, epoch = excluded.epoch, registered_at = now()
    ), ${countedCte("$1", "$5", "exists (select 1 from e)")}
    select (select state from caller) as state, (select held from caller) as held,
           coalesce((select id from e), (select id from recorded))::text as event_id,
           coalesce((select content from e), (select content from recorded)) as content,
           -- Nothing answered, yet a ready task is there: another claimer holds it locked.
           not exists (select 1 from e) and (select ok from may)
             and ${READY_EXISTS("$2::uuid")} as contended
      from (select count(*) from counted) as c`,
};

/** Finishes a task the caller holds: done with its result, or failed (its dependants block). */
export async function finishTask(
  tx: Queryable,
  done: {
    treeId: string;
    agentId: string;
    taskId: string;
    result: string;
    failed: boolean;
    key: string;
  },
): Promise<TaskState> {
  if (!UUID.test(done.taskId)) {
    throw new AgentError("INVALID_ARGS", `unknown task ${done.taskId}`);
  }
  const state: TaskState = done.failed ? "failed" : "done";
  const rows = await tx.execute<{ id: string }>(sql`
    update tasks set state = ${state}, result = ${done.result}, done_key = ${done.key},
                     done_at = now()
     where id = ${done.taskId} and tree_id = ${done.treeId}
       and state = 'claimed' and claimed_by = ${done.agentId}
    returning id`);
  if (rows.rows.length) return state;
  const found = await tx.execute<{ state: TaskState; claimed_by: string | null }>(sql`
    select state, claimed_by from tasks where id = ${done.taskId} and tree_id = ${done.treeId}`);
  const task = found.rows[0];
  if (!task) throw new AgentError("INVALID_ARGS", `unknown task ${done.taskId}`);
  if (task.state === "done" || task.state === "failed") {
    throw new AgentError("NOT_ALLOWED", `task ${done.taskId} is already ${task.state}`);
  }
  throw new AgentError(
    "NOT_ALLOWED",
    `task ${done.taskId} is not yours: claim it with task_claim before finishing it`,
  );
}

/** The board of a tree, oldest first, with `blocked` computed. */
export async function listTasks(q: Queryable, treeId: string): Promise<TaskEntry[]> {
  const rows = await q.execute<TaskEntry>(sql`
    with ${BLOCKED_CTE(treeId)}
    select t.id::text as task_id, t.title,
           case when t.state = 'pending' and t.id in (select id from bad) then 'blocked'
                else t.state end as state,
           t.claimed_by::text as claimed_by, a.name as claimed_by_name, t.result,
           t.depends_on::text[] as depends_on
      from tasks t left join agents a on a.id = t.claimed_by
     where t.tree_id = ${treeId}
     order by t.created_at, t.id`);
  return rows.rows;
}

/** Tasks of a tree by shown state, for the status bar. */
export async function countTasks(
  q: Queryable,
  treeId: string,
): Promise<Record<TaskShownState, number>> {
  const counts: Record<TaskShownState, number> = {
    pending: 0,
    claimed: 0,
    done: 0,
    failed: 0,
    blocked: 0,
  };
  for (const task of await listTasks(q, treeId)) counts[task.state] += 1;
  return counts;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
