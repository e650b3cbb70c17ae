// The mail_waits table: a `wait` for the oldest mail that found none and blocks registers here
// (its call's key, lease and how to record its result), so the next send to its agent hands the
// mail over in its own statement: it consumes the mail, records the wait's result under the
// wait's key and NOTIFYs it, and the waiter returns without another round trip (src/mail/
// handoff.ts). The key's unique index on events keeps one result per call, whoever records it.
import { bigint, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";

export const mailWaits = pgTable(
  "mail_waits",
  {
    agent_id: uuid("agent_id").notNull(),
    tree_id: uuid("tree_id").notNull(),
    /** The wait call's event key (event-keys.ts): its result is the event with this key. */
    key: text("key").notNull(),
    /** The result event's kind and data, as the wait would record them itself. */
    kind: text("kind").notNull(),
    data: jsonb("data").notNull(),
    /** The lease the wait runs under (null: not leased): a handoff needs it still current. */
    lease_owner: text("lease_owner"),
    epoch: bigint("epoch", { mode: "number" }),
    created_at: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.agent_id, t.key] })],
);
