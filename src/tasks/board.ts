// The task board's statements (SPEC §3): add, claim, finish and list the tasks of one tree. Each
// runs inside the caller's transaction, after the caller's agent row is locked (lockCaller), so a
// claim or a completion commits with the tool call's keyed, fenced result or not at all. Lock
// order (lock-order.ts): the caller's agent row, then task rows (claimed with SKIP LOCKED).
import { sql } from "drizzle-orm";
import { AgentError, LeaseLost, type Fence } from "../agents/errors.js";
import type { Queryable } from "../db/client.js";
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

/**
 * Claims the oldest pending task of the tree whose dependencies are all done (SKIP LOCKED: two
 * claimers never take the same one, nor wait for each other). Returns the task with its
 * dependencies' results; "empty" when nothing is open at all (no claimed task, no pending one
 * that is not blocked); undefined when others hold tasks that may yet make one claimable.
 */
export async function claimTask(
  tx: Queryable,
  claim: { treeId: string; agentId: string; key: string; epoch: number | null },
): Promise<ClaimedTask | "empty" | undefined> {
  const rows = await tx.execute<{
    id: string;
    title: string;
    detail: string | null;
    depends_on: string[];
  }>(sql`
    with pick as (
      select t.id from tasks t
       where t.tree_id = ${claim.treeId} and t.state = 'pending'
         and not exists (select 1 from tasks d
                          where d.id = any(t.depends_on) and d.state <> 'done')
       order by t.created_at, t.id
       limit 1
       for update skip locked
    )
    update tasks set state = 'claimed', claimed_by = ${claim.agentId}, claim_key = ${claim.key},
                     claim_epoch = ${claim.epoch}, claimed_at = now()
      from pick
     where tasks.id = pick.id and tasks.state = 'pending'
    returning tasks.id, tasks.title, tasks.detail, tasks.depends_on::text[] as depends_on`);
  const task = rows.rows[0];
  if (task) {
    const deps = await tx.execute<{ task_id: string; title: string; result: string | null }>(sql`
      select d.id::text as task_id, d.title, d.result
        from unnest(${sql.param(task.depends_on)}::uuid[]) with ordinality as u(id, ord)
        join tasks d on d.id = u.id
       order by u.ord`);
    return { task_id: task.id, title: task.title, detail: task.detail, depends_on: deps.rows };
  }
  const open = await tx.execute<{ open: boolean }>(sql`
    with ${BLOCKED_CTE(claim.treeId)}
    select exists (select 1 from tasks t
                    where t.tree_id = ${claim.treeId}
                      and (t.state = 'claimed'
                           or (t.state = 'pending' and t.id not in (select id from bad))))
           as open`);
  return open.rows[0]!.open ? undefined : "empty";
}

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
