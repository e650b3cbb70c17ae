// The tasks table: one task board per tree (SPEC §3, "The task board"). A task is claimed and
// completed by tool calls whose keys it records; the claim and the completion commit with the
// call's keyed, lease-fenced tool_result (src/tasks/board.ts), so each happens once.
import { sql } from "drizzle-orm";
import { bigint, check, index, jsonb, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { timestamptz, timestamptzNow } from "../db/columns.js";

export const TASK_STATES = ["pending", "claimed", "done", "failed"] as const;
export type TaskState = (typeof TASK_STATES)[number];

export const tasks = pgTable(
  "tasks",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** The tree's root id: one board per tree. */
    tree_id: uuid("tree_id").notNull(),
    title: text("title").notNull(),
    detail: text("detail"),
    /** Tasks of the same tree that must be done before this one can be claimed. */
    depends_on: uuid("depends_on")
      .array()
      .notNull()
      .default(sql`'{}'::uuid[]`),
    state: text("state").$type<TaskState>().notNull().default("pending"),
    /** The agent that added it (null: the person). */
    created_by: uuid("created_by"),
    /** The agent holding it while `claimed`, and who finished it once done or failed. */
    claimed_by: uuid("claimed_by"),
    /** The event key of the task_claim call that holds it (one task per call). */
    claim_key: text("claim_key"),
    /** The claimer's lease epoch at the claim. */
    claim_epoch: bigint("claim_epoch", { mode: "number" }),
    /** The event key of the task_done call that finished it. */
    done_key: text("done_key"),
    result: text("result"),
    created_at: timestamptzNow("created_at"),
    claimed_at: timestamptz("claimed_at"),
    done_at: timestamptz("done_at"),
  },
  (t) => [
    index("tasks_tree_idx").on(t.tree_id, t.created_at),
    index("tasks_pending_idx")
      .on(t.tree_id, t.created_at)
      .where(sql`state = 'pending'`),
    index("tasks_claimed_by_idx")
      .on(t.claimed_by)
      .where(sql`state = 'claimed'`),
    uniqueIndex("tasks_claim_key_idx")
      .on(t.claim_key)
      .where(sql`claim_key is not null`),
    uniqueIndex("tasks_done_key_idx")
      .on(t.done_key)
      .where(sql`done_key is not null`),
    check("tasks_state_check", sql`state in ('pending', 'claimed', 'done', 'failed')`),
  ],
);

export type TaskRow = typeof tasks.$inferSelect;

/**
 * A task_claim that found nothing ready and blocks registers here (its call's key, lease and the
 * result's data), so that a task_add whose task is ready hands it over in the add's own
 * statement: it records the claim's result under the claim's key, inserts the task claimed and
 * NOTIFYs the result (src/tasks/board.ts, migration 0027). One row per agent, kept: registering
 * sets `key` and leaving clears it (HOT updates: no index covers either column, nor
 * registered_at), as mail_waits.
 */
export const taskWaits = pgTable(
  "task_waits",
  {
    agent_id: uuid("agent_id").primaryKey(),
    tree_id: uuid("tree_id").notNull(),
    /** The blocked claim call's event key; null: no claim is registered. */
    key: text("key"),
    /** The result event's data, as the claim would record it itself. */
    data: jsonb("data").notNull(),
    /** The lease the claim runs under (null: not leased): a handoff needs it still current. */
    lease_owner: text("lease_owner"),
    epoch: bigint("epoch", { mode: "number" }),
    registered_at: timestamptzNow("registered_at"),
  },
  (t) => [index("task_waits_tree_idx").on(t.tree_id)],
);
