// The mail table: every message between agents (or from the person), consumed but never deleted.
import { sql } from "drizzle-orm";
import { bigint, bigserial, index, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";

export const mail = pgTable(
  "mail",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    tree_id: uuid("tree_id").notNull(),
    /** null = the person at the keyboard */
    from_id: uuid("from_id"),
    to_id: uuid("to_id").notNull(),
    body: text("body").notNull(),
    created_at: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    consumed_at: timestamp("consumed_at", { withTimezone: true }),
    consumed_by_event: bigint("consumed_by_event", { mode: "number" }),
  },
  (t) => [
    index("mail_inbox_idx")
      .on(t.to_id, t.id)
      .where(sql`consumed_at is null`),
    index("mail_inbox_from_idx")
      .on(t.to_id, t.from_id, t.id)
      .where(sql`consumed_at is null`),
  ],
);

export type MailRow = typeof mail.$inferSelect;
