// The events table: an agent's transcript, one row per thing shown in scrollback.
import { bigserial, index, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";

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
  },
  (t) => [index("events_agent_idx").on(t.agent_id, t.id)],
);

export type EventRow = typeof events.$inferSelect;
