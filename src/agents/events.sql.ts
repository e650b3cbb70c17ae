// The events table: an agent's transcript, one row per thing shown in scrollback.
import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  index,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";

export const EVENT_KINDS = [
  "user",
  "assistant",
  "tool_call",
  "tool_result",
  "system",
  "capture",
  "command",
  "mail_in",
  "mail_out",
  "fork",
  "killed",
  "interrupted",
  "error",
  /** Compaction: a model-written summary that later contexts start from (data.through_event). */
  "summary",
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export const events = pgTable(
  "events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    agent_id: uuid("agent_id").notNull(),
    kind: text("kind").$type<EventKind>().notNull(),
    content: text("content").notNull().default(""),
    data: jsonb("data").$type<Record<string, unknown>>(),
    created_at: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /**
     * The write's idempotency key, unique per agent (events_key_idx): a write that a retry may
     * repeat carries one (event-keys.ts), so the second attempt is refused by the database and
     * reads what the first recorded instead of doing the work again.
     */
    key: text("key"),
    /** The lease epoch of the turn that wrote it (null: not a turn's write); checked on insert. */
    epoch: bigint("epoch", { mode: "number" }),
  },
  (t) => [
    index("events_agent_idx").on(t.agent_id, t.id),
    uniqueIndex("events_key_idx")
      .on(t.agent_id, t.key)
      .where(sql`key is not null`),
  ],
);

export type EventRow = typeof events.$inferSelect;
