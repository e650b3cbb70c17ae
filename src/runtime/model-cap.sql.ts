// The model-cap tables (migration 0026): one row per capped model server (its cap, and how long
// a 429 paused it), and one per agent holding or waiting for one of its slots (model-cap.ts).
import { bigint, boolean, index, integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { timestamptz, timestamptzNow } from "../db/columns.js";

export const modelServers = pgTable("model_servers", {
  key: text("key").primaryKey(),
  cap: integer("cap").notNull(),
  paused_until: timestamptz("paused_until"),
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
    queued_at: timestamptzNow("queued_at"),
    granted_at: timestamptz("granted_at"),
  },
  (t) => [index("model_slots_server_idx").on(t.server, t.granted, t.ticket)],
);
