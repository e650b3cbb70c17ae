// The model-cap tables (migration 0026): one row per capped model server (its cap, and how long
// a 429 paused it), and one per agent holding or waiting for one of its slots (model-cap.ts).
import {
  bigint,
  boolean,
  index,
  integer,
  pgTable,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";

export const modelServers = pgTable("model_servers", {
  key: text("key").primaryKey(),
  cap: integer("cap").notNull(),
  paused_until: timestamp("paused_until", { withTimezone: true }),
});

export const modelSlots = pgTable(
  "model_slots",
  {
    agent_id: uuid("agent_id").primaryKey(),
    server: text("server").notNull(),
    /** Place in the server's queue (FIFO), from the model_slot_tickets sequence. */
    ticket: bigint("ticket", { mode: "number" }).notNull(),
    /** The lease epoch it was taken under: the row counts only while the agent's lease is that. */
    epoch: bigint("epoch", { mode: "number" }).notNull(),
    granted: boolean("granted").notNull().default(false),
    queued_at: timestamp("queued_at", { withTimezone: true }).notNull().defaultNow(),
    granted_at: timestamp("granted_at", { withTimezone: true }),
  },
  (t) => [index("model_slots_server_idx").on(t.server, t.granted, t.ticket)],
);
