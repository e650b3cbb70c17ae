// Approval requests as rows: asked by a turn (one per tool call, keyed by it), answered by any
// person on the tree — a TUI in any process, or `warren approve` / `warren deny` — first answer
// wins, recorded as an event in the asking agent's transcript; the asking turn is woken by NOTIFY.
import { and, asc, eq, sql } from "drizzle-orm";
import { agents } from "../agents/agents.sql.js";
import { AgentError } from "../agents/errors.js";
import { appendEvent } from "../agents/events.js";
import { agentChannel, notify } from "../bus/channels.js";
import { UNLISTENED_POLL_MS, type Bus } from "../bus/bus.js";
import type { ApproveMode } from "../policy/policy.js";
import { shownTreeRule, treeRulesCover } from "../policy/tree-rules.js";
import { loadShellParser } from "../policy/shell.js";
import { acceptRequested, FILE_CHANGE_TOOL } from "../config/accepted-files.js";
import type { Db, Queryable } from "../db/client.js";
import { approvals, type ApprovalRow } from "./approvals.sql.js";

export interface ApprovalRequest {
  treeId: string;
  agentId: string;
  callKey: string;
  tool: string;
  subject: string;
  arguments: string;
  pattern: string;
}

/** Records the request, or finds the one this call made before (a retry, a resumed turn). */
export async function requestApproval(db: Db, request: ApprovalRequest): Promise<ApprovalRow> {
  const [row] = await db
    .insert(approvals)
    .values({
      tree_id: request.treeId,
      agent_id: request.agentId,
      call_key: request.callKey,
      tool: request.tool,
      subject: request.subject,
      arguments: request.arguments,
      pattern: request.pattern,
    })
    .onConflictDoNothing({ target: [approvals.agent_id, approvals.call_key] })
    .returning();
  if (row) return row;
  const [existing] = await db
    .select()
    .from(approvals)
    .where(and(eq(approvals.agent_id, request.agentId), eq(approvals.call_key, request.callKey)));
  return existing!;
}

/** The approval this call asked for, if it asked (a resumed turn looks for its request). */
export async function approvalOfCall(
  q: Queryable,
  agentId: string,
  callKey: string,
): Promise<ApprovalRow | undefined> {
  const [row] = await q
    .select()
    .from(approvals)
    .where(and(eq(approvals.agent_id, agentId), eq(approvals.call_key, callKey)));
  return row;
}

/**
 * Marks an allowed request's call as started; false when it was started before (by a worker that
 * lost the agent since): the call then must not run again. Together with the resume rule (a call
 * whose request was never started is run again) an allowed call runs exactly once.
 */
export async function markStarted(q: Queryable, id: number): Promise<boolean> {
  const rows = await q.execute(sql`
    update approvals set started_at = now()
     where id = ${id} and status = 'allowed' and started_at is null
    returning id`);
  return rows.rows.length > 0;
}

/**
 * Marks a call let through without a person's answer (a tree-wide rule, `--approve all`) as
 * started, when it asked before (a request row exists: it waited, then became covered): true
 * when this worker may run it, false when it was started before (a crash after the start: it
 * may have run, so it must not run again). A call that never asked has no row, and the resume
 * rule never reruns it. So every path that runs an asked call marks it started first (issue 28).
 */
export async function markStartedWithout(
  q: Queryable,
  request: ApprovalRequest,
  by: string,
): Promise<boolean> {
  const rows = await q.execute<{ marked: boolean; existed: boolean }>(sql`
    with marked as (
      update approvals
         set started_at = now(),
             status = case when status = 'pending' then 'allowed' else status end,
             answered_by = coalesce(answered_by, ${by}),
             answered_at = coalesce(answered_at, now())
       where agent_id = ${request.agentId} and call_key = ${request.callKey}
         and started_at is null
      returning id)
    select exists (select 1 from marked) as marked,
           exists (select 1 from approvals
                    where agent_id = ${request.agentId} and call_key = ${request.callKey})
             as existed`);
  const row = rows.rows[0];
  return row?.marked === true || row?.existed !== true;
}

/** How the tree answers `ask` (recorded on its root when it started; older trees: `all`). */
export async function treeApproveMode(q: Queryable, treeId: string): Promise<ApproveMode> {
  const rows = await q.execute<{ approve: ApproveMode | null }>(
    sql`select approve from agents where id = ${treeId}`,
  );
  return rows.rows[0]?.approve ?? "all";
}

/** Has a person allowed calls like this one for the whole tree? */
export async function treeAllows(
  q: Queryable,
  treeId: string,
  tool: string,
  subject: string,
): Promise<boolean> {
  const rows = await q.execute<{ pattern: string }>(sql`
    select distinct pattern from approvals
     where tree_id = ${treeId} and tool = ${tool} and status = 'allowed' and scope = 'tree'`);
  if (rows.rows.length === 0) return false;
  if (tool === "bash") await loadShellParser();
  return treeRulesCover(
    tool,
    rows.rows.map((r) => r.pattern),
    subject,
  );
}

/**
 * Resolves once the request is answered (or cancelled). Woken by the NOTIFY an answer sends on
 * the agent's channel, with a slow re-check in case a notification is lost.
 */
export async function awaitAnswer(
  db: Db,
  bus: Bus,
  request: ApprovalRow,
  signal: AbortSignal,
  recheckMs = 5_000,
): Promise<ApprovalRow> {
  let wake: (() => void) | undefined;
  const unsubscribe = await bus.subscribe(agentChannel(request.agent_id), (payload) => {
    if (payload === "approval") wake?.();
  });
  const onAbort = () => wake?.();
  signal.addEventListener("abort", onAbort);
  try {
    while (true) {
      if (signal.aborted) throw abortError();
      const [row] = await db.select().from(approvals).where(eq(approvals.id, request.id));
      if (row && row.status !== "pending") return row;
      const interval = bus.listening() ? recheckMs : Math.min(recheckMs, UNLISTENED_POLL_MS);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, interval);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    unsubscribe();
  }
}

function abortError(): Error {
  const err = new Error("approval wait interrupted");
  err.name = "AbortError";
  return err;
}

export interface Answer {
  allow: boolean;
  /** Allow this call only, or the request's pattern for the whole tree. */
  scope?: "once" | "tree";
  /** Why it was denied: the model reads it. */
  reason?: string;
  /** Who answered, as shown in the transcript ("person (tui)", "person (cli)"). */
  by: string;
}

/**
 * Answers a pending request: the first answer wins (a second gets NOT_ALLOWED saying who was
 * first). The answer and who gave it become a `system` event of the asking agent, and the asking
 * turn is woken — all in one transaction.
 */
export async function answerApproval(
  db: Db,
  id: number,
  answer: Answer,
  treeId?: string,
): Promise<ApprovalRow> {
  if (answer.allow && answer.scope === "tree") await loadShellParser();
  const status = answer.allow ? "allowed" : "denied";
  const scope = answer.allow ? (answer.scope ?? "once") : null;
  const reason = answer.allow ? null : answer.reason?.trim() || null;
  const row = await db.transaction(async (tx) => {
    if (answer.allow && answer.scope === "tree") {
      const [asked] = await tx.select().from(approvals).where(eq(approvals.id, id));
      if (asked && asked.status === "pending" && asked.pattern === "") {
        throw new AgentError(
          "NOT_ALLOWED",
          `approval ${id} can only be allowed once: no rule can cover what its command hides`,
        );
      }
    }
    const [row] = await tx
      .update(approvals)
      .set({ status, scope, reason, answered_by: answer.by, answered_at: sql`now()` })
      .where(
        and(
          eq(approvals.id, id),
          eq(approvals.status, "pending"),
          treeId === undefined ? undefined : eq(approvals.tree_id, treeId),
        ),
      )
      .returning();
    if (!row) {
      const [other] = await tx.select().from(approvals).where(eq(approvals.id, id));
      if (!other || (treeId !== undefined && other.tree_id !== treeId)) {
        throw new AgentError("UNKNOWN_AGENT", `no approval request ${id}`);
      }
      const by = other.answered_by ? ` by ${other.answered_by}` : "";
      throw new AgentError("NOT_ALLOWED", `approval ${id} was already ${other.status}${by}`);
    }
    await appendEvent(tx, row.agent_id, "system", describeAnswer(row), {
      approval: row.id,
      status: row.status,
      scope: row.scope,
      by: row.answered_by,
      ...(row.reason ? { reason: row.reason } : {}),
    });
    await notify(tx, agentChannel(row.agent_id), "approval");
    if (row.status === "allowed" && row.scope === "tree") await releaseCovered(tx, row);
    return row;
  });
  // A change to an instruction or agent file, accepted: prompts use it from now on (the tree's
  // own process takes it in as well, runtime/file-changes.ts, should this one be elsewhere).
  if (row.tool === FILE_CHANGE_TOOL && row.status === "allowed") acceptRequested(row.arguments);
  return row;
}

/**
 * After "allow for the tree": every other pending request of the tree for the same tool that the
 * tree's rules now cover is allowed too (once, by the rule), its agent told and woken.
 */
async function releaseCovered(tx: Queryable, rule: ApprovalRow): Promise<void> {
  const rules = await tx.execute<{ pattern: string }>(sql`
    select distinct pattern from approvals
     where tree_id = ${rule.tree_id} and tool = ${rule.tool} and status = 'allowed'
       and scope = 'tree'`);
  const patterns = rules.rows.map((r) => r.pattern);
  const pending = await tx.execute<{ id: number; subject: string }>(sql`
    select id, subject from approvals
     where tree_id = ${rule.tree_id} and tool = ${rule.tool} and status = 'pending'
     order by id
       for update`);
  for (const request of pending.rows) {
    if (!treeRulesCover(rule.tool, patterns, request.subject)) continue;
    const updated = await tx.execute<ApprovalRow>(sql`
      update approvals
         set status = 'allowed', scope = 'once', answered_at = now(),
             answered_by = ${`${rule.answered_by ?? "person"} (rule of approval ${rule.id})`}
       where id = ${Number(request.id)} and status = 'pending'
      returning *`);
    const released = updated.rows[0];
    if (!released) continue;
    await appendEvent(
      tx,
      released.agent_id,
      "system",
      `approval ${released.id} allowed by the tree rule "${shownTreeRule(rule.pattern, rule.tool)}" (approval ${rule.id}): ${released.tool}: ${released.subject}`,
      { approval: Number(released.id), status: "allowed", scope: "once", by: released.answered_by },
    );
    await notify(tx, agentChannel(released.agent_id), "approval");
  }
}

/** "allowed once by person (tui): bash: npm test" — the transcript line of an answer. */
export function describeAnswer(row: ApprovalRow): string {
  const what = row.subject ? `${row.tool}: ${row.subject}` : row.tool;
  const how =
    row.status === "allowed"
      ? row.scope === "tree"
        ? `allowed for this tree (${shownTreeRule(row.pattern, row.tool)})`
        : "allowed once"
      : row.status;
  const by = row.answered_by ? ` by ${row.answered_by}` : "";
  const why = row.reason ? ` — ${row.reason}` : "";
  return `approval ${row.id} ${how}${by}: ${what}${why}`;
}

/** Withdraws the agent's open requests (its turn was interrupted or it died). */
export async function cancelPending(q: Queryable, agentId: string): Promise<void> {
  await q.execute(sql`
    update approvals set status = 'cancelled', answered_at = now()
     where agent_id = ${agentId} and status = 'pending'`);
}

export interface PendingApproval extends ApprovalRow {
  agent_name: string;
}

/** Open requests of living agents, oldest first (of one tree, or every tree). */
export async function listPending(db: Db, treeId?: string): Promise<PendingApproval[]> {
  const rows = await db
    .select({ approval: approvals, agent_name: agents.name })
    .from(approvals)
    .innerJoin(agents, eq(agents.id, approvals.agent_id))
    .where(
      and(
        eq(approvals.status, "pending"),
        sql`${agents.state} <> 'dead'`,
        treeId === undefined ? undefined : eq(approvals.tree_id, treeId),
      ),
    )
    .orderBy(asc(approvals.id));
  return rows.map((r) => ({ ...r.approval, agent_name: r.agent_name }));
}
