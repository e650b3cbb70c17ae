// The approvals table: one row per tool call the policy marks `ask` (SPEC §3), answered by a
// person from any TUI or the command line; the first answer wins.
import { sql } from "drizzle-orm";
import { check, index, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { serialId, timestamptz, timestamptzNow } from "../db/columns.js";

export const APPROVAL_STATUSES = ["pending", "allowed", "denied", "cancelled"] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

export const approvals = pgTable(
  "approvals",
  {
    id: serialId(),
    tree_id: uuid("tree_id").notNull(),
    agent_id: uuid("agent_id").notNull(),
    /** The call's result key (event-keys.ts): one request per tool call, whoever asks again. */
    call_key: text("call_key").notNull(),
    tool: text("tool").notNull(),
    /** What the policy matched: the command or the path. */
    subject: text("subject").notNull(),
    arguments: text("arguments").notNull(),
    /** What "allow for the tree" would remember (policy.ts treePattern). */
    pattern: text("pattern").notNull(),
    status: text("status").$type<ApprovalStatus>().notNull().default("pending"),
    /** "once" or "tree" for an allowed call. */
    scope: text("scope").$type<"once" | "tree">(),
    /** Why it was denied (the model sees it). */
    reason: text("reason"),
    answered_by: text("answered_by"),
    created_at: timestamptzNow("created_at"),
    answered_at: timestamptz("answered_at"),
    /** When an allowed call began to run: it runs once, whoever resumes the turn (markStarted). */
    started_at: timestamptz("started_at"),
  },
  (t) => [
    uniqueIndex("approvals_call_idx").on(t.agent_id, t.call_key),
    index("approvals_pending_idx")
      .on(t.tree_id, t.id)
      .where(sql`status = 'pending'`),
    index("approvals_tree_rules_idx")
      .on(t.tree_id, t.tool)
      .where(sql`status = 'allowed' and scope = 'tree'`),
    check(
      "approvals_status_check",
      sql`${t.status} in ('pending', 'allowed', 'denied', 'cancelled')`,
    ),
  ],
);

export type ApprovalRow = typeof approvals.$inferSelect;
