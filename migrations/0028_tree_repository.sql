-- warren's git touches only the tree's repository (issue 37 §3). A root records the repository its
-- working directory was in when the tree started: the common git directory as a real path, or
-- null outside any. Every git run of warren's for the tree (a worktree fork, changes, diff, merge,
-- discard) first asks git where the directory's `.git` leads and refuses any other repository
-- (src/agents/repository.ts). Trees started before this migration take the repository their
-- worktrees were made in (`worktree.common`, recorded since 0024's rows gained it); the others
-- recorded none, so warren's git refuses every repository for them.
ALTER TABLE "agents" ADD COLUMN "repository" text;
--> statement-breakpoint
UPDATE "agents" AS r
   SET "repository" = (SELECT c."worktree"->>'common' FROM "agents" c
                        WHERE c."tree_id" = r."id" AND c."worktree" ? 'common'
                        ORDER BY c."created_at" LIMIT 1)
 WHERE r."id" = r."tree_id";
