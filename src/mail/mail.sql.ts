// The mail table: every message between agents (or from the person), consumed but never deleted.
import { sql } from "drizzle-orm";
import { bigint, boolean, check, index, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { serialId, timestamptz, timestamptzNow } from "../db/columns.js";

export type MailKind = "mail" | "input";

export const mail = pgTable(
  "mail",
  {
    id: serialId(),
    tree_id: uuid("tree_id").notNull(),
    /** null = the person at the keyboard */
    from_id: uuid("from_id"),
    /**
     * "mail": a message (taken by `wait` or at the end of a turn); "input": text the person typed
     * into the agent's input while it was busy, delivered as a `user` event when its turn ends.
     */
    kind: text("kind").$type<MailKind>().notNull().default("mail"),
    to_id: uuid("to_id").notNull(),
    body: text("body").notNull(),
    /**
     * A child's final answer: the text its turn ended with, mailed for it because it sent its
     * parent nothing in that turn (mail/final-answer.ts), or its `send {final: true}` to its parent.
     */
    final: boolean("final").notNull().default(false),
    /**
     * The message parsed, when the sender has an output schema, the mail goes to its parent and
     * the schema accepted it (checked once, at the send): what the parent's `wait` reports.
     */
    result: jsonb("result"),
    /**
     * The W3C traceparent of the span that sent it (the `send` call, or the run whose final
     * answer this is), so the span that takes it in links back to it; null: telemetry was off.
     */
    trace_context: text("trace_context"),
    created_at: timestamptzNow("created_at"),
    consumed_at: timestamptz("consumed_at"),
    consumed_by_event: bigint("consumed_by_event", { mode: "number" }),
  },
  (t) => [
    index("mail_inbox_idx")
      .on(t.to_id, t.id)
      .where(sql`consumed_at is null`),
    index("mail_inbox_from_idx")
      .on(t.to_id, t.from_id, t.id)
      .where(sql`consumed_at is null`),
    check("mail_kind_check", sql`${t.kind} in ('mail', 'input')`),
  ],
);

export type MailRow = typeof mail.$inferSelect;
