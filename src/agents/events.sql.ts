// The events table: an agent's transcript, one row per thing shown in scrollback.
import { sql } from "drizzle-orm";
import { bigint, index, jsonb, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { serialId, timestamptz, timestamptzNow } from "../db/columns.js";

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

/** The kinds people read, full-text indexed for search (src/search; events_search_idx). */
export const SEARCHED_KINDS = [
  "user",
  "assistant",
  "tool_call",
  "tool_result",
  "mail_in",
  "mail_out",
  "capture",
  "system",
  "error",
  "summary",
] as const satisfies readonly EventKind[];

/**
 * The indexed text: the first SEARCH_PREFIX characters of content. A tsvector holds at most 1 MB,
 * so the whole of a large tool result could make its insert fail; and parsing costs about 0.3 µs a
 * character on every insert: 20k characters bound both (past them, only the substring fallback sees).
 */
export const SEARCH_PREFIX = 20_000;
export const searchVector = sql.raw(`to_tsvector('simple', left(content, ${SEARCH_PREFIX}))`);
export const searchedKind = sql.raw(`kind in (${SEARCHED_KINDS.map((k) => `'${k}'`).join(", ")})`);

export const events = pgTable(
  "events",
  {
    id: serialId(),
    agent_id: uuid("agent_id").notNull(),
    /** The agent's tree (filled from the agent by the events_tree_id trigger when not given). */
    tree_id: uuid("tree_id")
      .notNull()
      .default(sql`null`),
    kind: text("kind").$type<EventKind>().notNull(),
    content: text("content").notNull().default(""),
    data: jsonb("data").$type<Record<string, unknown>>(),
    created_at: timestamptzNow("created_at"),
    /**
     * The write's idempotency key, unique per agent (events_key_idx): a write that a retry may
     * repeat carries one (event-keys.ts), so the second attempt is refused by the database and
     * reads what the first recorded instead of doing the work again.
     */
    key: text("key"),
    /** The lease epoch of the turn that wrote it (null: not a turn's write); checked on insert. */
    epoch: bigint("epoch", { mode: "number" }),
    /**
     * Set by a rewind (src/agents/rewind.ts): the event belongs to a turn that was undone. Kept
     * for people (folded in the scrollback), out of every model request (migration 0032).
     */
    rewound_at: timestamptz("rewound_at"),
  },
  (t) => [
    index("events_agent_idx").on(t.agent_id, t.id),
    uniqueIndex("events_key_idx")
      .on(t.agent_id, t.key)
      .where(sql`key is not null`),
    // An expression index, no stored column: an insert of a searched kind pays for parsing its
    // text and its words' GIN entries (pending-list appends), rows stay as they were.
    index("events_search_idx").using("gin", searchVector).where(searchedKind),
  ],
);

export type EventRow = typeof events.$inferSelect;
