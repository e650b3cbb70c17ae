// The task board's statements (SPEC §3): add, claim, finish and list the tasks of one tree. Each
// runs inside the caller's transaction, after the caller's agent row is locked (lockCaller), so a
// claim or a completion commits with the tool call's keyed, fenced result or not at all. Lock
// order (lock-order.ts): the caller's agent row, then task rows (claimed with SKIP LOCKED).
import { sql } from "drizzle-orm";
import { AgentError, LeaseLost, type Fence } from "../agents/errors.js";
import type { Queryable } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import { countedCte } from "../agents/events.js";
import type { TaskState } from "./tasks.sql.js";

/** The channel every change of a tree's tasks is told on (trigger tasks_notify, migration 0022). */
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
 */
export async function addTask(tx: Queryable, task: NewTask): Promise<string> {
  const deps = [...new Set(task.dependsOn ?? [])];
  const malformed = deps.filter((d) => !UUID.test(d));
  if (malformed.length) {
    throw new AgentError("INVALID_ARGS", `unknown task(s) in depends_on: ${malformed.join(", ")}`);
  }
  const rows = await tx.execute<{ id: string | null; missing: string[] }>(sql`
    with found as (
      select id from tasks where tree_id = ${task.treeId} and id = any(${sql.param(deps)}::uuid[])
    ), missing as (
      select coalesce(array_agg(d::text), '{}') as ids
        from unnest(${sql.param(deps)}::uuid[]) d where d not in (select id from found)
    ), ins as (
      insert into tasks (tree_id, title, detail, depends_on, created_by)
      select ${task.treeId}, ${task.title}, ${task.detail ?? null},
             ${sql.param(deps)}::uuid[], ${task.createdBy}
       where (select cardinality(ids) = 0 from missing)
      returning id
    )
    select (select id from ins) as id, (select ids from missing) as missing`);
  const row = rows.rows[0]!;
  if (row.id === null) {
    throw new AgentError(
      "INVALID_ARGS",
      `unknown task(s) in depends_on (not on this tree's board): ${row.missing.join(", ")}`,
    );
  }
  return row.id;
}

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

/** What a claim answered: its recorded result, or nothing yet (others hold what it may wait for). */
export type ClaimAnswer = { eventId: number; content: string } | undefined;

/**
 * Claims the oldest pending task of the tree whose dependencies are all done (SKIP LOCKED: two
 * claimers never take the same one, nor wait for each other) and records the call's keyed, fenced
 * `tool_result`, in one statement: the task with its dependencies' results, `{"status":"empty"}`
 * when nothing is open at all (no claimed task, no pending one that is not blocked), or, when
 * `final`, `{"status":"timeout"}`. Otherwise (others hold tasks that may yet make one claimable)
 * nothing is written and undefined returned. The caller's lease is checked in it (LeaseLost,
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
  },
): Promise<ClaimAnswer> {
  const [row] = await runPrepared<{
    state: string | null;
    held: boolean | null;
    event_id: string | null;
    content: string | null;
  }>(q, CLAIM_TASK, [
    claim.agentId,
    claim.treeId,
    `${claim.agentId}:${claim.resultKey}`,
    claim.fence?.owner ?? null,
    claim.fence?.epoch ?? null,
    claim.resultKey,
    claim.final,
    JSON.stringify({ tool_call_id: claim.toolCallId, name: "task_claim" }),
  ]);
  if (row?.event_id) return { eventId: Number(row.event_id), content: row.content! };
  if (row?.state === "dead") throw new AgentError("AGENT_DEAD", "you are dead");
  if (!row?.held) throw new LeaseLost(claim.agentId);
  return undefined;
}

/**
 * $1 agent, $2 tree, $3 claim key, $4 lease owner (null: unfenced), $5 lease epoch, $6 the call's
 * result key, $7 final (a timeout is the answer when nothing is claimable), $8 the result's data.
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
        (select json_build_object(
                  'task_id', g.id::text, 'title', g.title, 'detail', g.detail,
                  'depends_on', coalesce(
                    (select json_agg(json_build_object(
                              'task_id', d.id::text, 'title', d.title, 'result', d.result)
                            order by u.ord)
                       from unnest(g.depends_on) with ordinality as u(id, ord)
                       join tasks d on d.id = u.id),
                    '[]'::json))
           from claimed g),
        case when not exists (select 1 from tasks t
                               where t.tree_id = $2::uuid
                                 and (t.state = 'claimed'
                                      or (t.state = 'pending'
                                          and t.id not in (select id from bad))))
             then json_build_object('status', 'empty')
             when $7::boolean then json_build_object('status', 'timeout') end) as value
       where (select ok from may)
    ), e as (
      insert into events (agent_id, kind, content, data, key, epoch)
      select $1::uuid, 'tool_result', value::text, $8::jsonb, $6::text, $5::bigint
        from answer where value is not null
      returning id, content
    ), ${countedCte("$1", "$5", "exists (select 1 from e)")}
    select (select state from caller) as state, (select held from caller) as held,
           coalesce((select id from e), (select id from recorded))::text as event_id,
           coalesce((select content from e), (select content from recorded)) as content
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
