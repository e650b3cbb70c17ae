-- Undo (issue 43, SPEC §11). A checkpoint of an agent's working directory is taken before each
-- turn that may change files: one row per turn, keyed by the event that started it (a resumed
-- turn finds its row and takes no second one). `commit_sha` is the git commit of the snapshot
-- (kept reachable by `ref`); outside a repository `store_key` names its manifest in warren's
-- home. `files` (what the turn changed) is filled when the next checkpoint is taken. A rewind
-- marks the events of the turns it undoes `rewound_at`: they stay for people (folded in the
-- scrollback) and are out of every model request.
CREATE TABLE "checkpoints" (
  "id" bigserial PRIMARY KEY NOT NULL,
  "agent_id" uuid NOT NULL,
  "tree_id" uuid NOT NULL,
  "start_event" bigint NOT NULL,
  "dir" text NOT NULL,
  "ref" text,
  "commit_sha" text,
  "tree_sha" text,
  "store_key" text,
  "skipped" text[] DEFAULT '{}' NOT NULL,
  "files" text[],
  "taken_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "checkpoints_turn_idx" ON "checkpoints" USING btree ("agent_id","start_event");
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "rewound_at" timestamp with time zone;
