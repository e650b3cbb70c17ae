// The feed_watchers table: one row per open feed (a TUI on a tree), kept alive by the feed. The
// feed triggers NOTIFY only trees someone watches, so headless runs and workers pay nothing.
import { sql } from "drizzle-orm";
import { index, pgTable, uuid } from "drizzle-orm/pg-core";
import { timestamptz } from "../db/columns.js";

export const feedWatchers = pgTable(
  "feed_watchers",
  {
    id: uuid("id").primaryKey(),
    tree_id: uuid("tree_id").notNull(),
    /** Refreshed while the feed is open; a crashed feed's row simply expires. */
    expires_at: timestamptz("expires_at").notNull(),
    /** The agents whose streaming text this feed reads (the viewed one): only theirs is written. */
    streams: uuid("streams")
      .array()
      .notNull()
      .default(sql`'{}'::uuid[]`),
  },
  (t) => [index("feed_watchers_tree_idx").on(t.tree_id, t.expires_at)],
);
