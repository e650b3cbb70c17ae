// The checkpoints table: the working directory of an agent before one of its turns (issue 43,
// SPEC §11; migration 0032). One row per turn that may change files, keyed by the event that
// started the turn, so a resumed turn finds its checkpoint instead of taking a second one.
import { sql } from "drizzle-orm";
import { bigint, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { serialId, timestamptzNow } from "../db/columns.js";

export const checkpoints = pgTable(
  "checkpoints",
  {
    id: serialId(),
    agent_id: uuid("agent_id").notNull(),
    tree_id: uuid("tree_id").notNull(),
    /** The `user` or `mail_in` event that started the turn. */
    start_event: bigint("start_event", { mode: "number" }).notNull(),
    /** The working directory it is of (the agent's cwd, or its worktree). */
    dir: text("dir").notNull(),
    /**
     * In a repository: the ref that keeps the commit reachable, in the agent's vault under
     * warren's home (checkpoint-git.ts; rows taken before the vaults: a ref in the repository),
     * and the commit (git).
     */
    ref: text("ref"),
    commit_sha: text("commit_sha"),
    /** The commit's tree: an unchanged directory shares the previous checkpoint's commit. */
    tree_sha: text("tree_sha"),
    /** Outside a repository: the manifest's key in warren's home (checkpoint-store.ts). */
    store_key: text("store_key"),
    /** Files left out for their size (checkpoint_max_file_bytes), relative to `dir`. */
    skipped: text("skipped")
      .array()
      .notNull()
      .default(sql`'{}'`),
    /** What the turn changed, relative to `dir`: filled when the next checkpoint is taken. */
    files: text("files").array(),
    taken_at: timestamptzNow("taken_at"),
  },
  (t) => [uniqueIndex("checkpoints_turn_idx").on(t.agent_id, t.start_event)],
);

export type CheckpointRow = typeof checkpoints.$inferSelect;
