// The mail_waits table: a `wait` for the oldest mail that found none and blocks registers here
// (its call's key, lease and how to record its result), so the next send to its agent hands the
// mail over in its own statement: it consumes the mail, records the wait's result under the
// wait's key and NOTIFYs it, and the waiter returns without another round trip (src/mail/
// handoff.ts). The key's unique index on events keeps one result per call, whoever records it.
//
// One row per agent that ever blocked, kept: registering sets its key, handing over or leaving
// clears it, both updates of columns no index covers (HOT, pruned in place). A row inserted and
// deleted per wait would leave a dead index entry per wait for every send's lookup to step over
// until a vacuum. A second wait of the same agent blocking at once takes the registration over;
// the first is then woken by the send's NOTIFY like any unregistered wait and takes mail itself.
import { bigint, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { timestamptzNow } from "../db/columns.js";

export const mailWaits = pgTable("mail_waits", {
  agent_id: uuid("agent_id").primaryKey(),
  tree_id: uuid("tree_id").notNull(),
  /**
   * The blocked wait call's event key (event-keys.ts): its result is the event with this key.
   * Null: no wait is registered.
   */
  key: text("key"),
  /** The result event's kind and data, as the wait would record them itself. */
  kind: text("kind").notNull(),
  data: jsonb("data").notNull(),
  /** The lease the wait runs under (null: not leased): a handoff needs it still current. */
  lease_owner: text("lease_owner"),
  epoch: bigint("epoch", { mode: "number" }),
  registered_at: timestamptzNow("registered_at"),
});
