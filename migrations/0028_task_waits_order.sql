-- An add hands its task to the claimer that has waited longest (src/tasks/board.ts, ADD_TASK):
-- read in that order from the registered claims alone, it stops at the first whose lease is still
-- current instead of checking every claim blocked on the board and sorting them (thousands, when
-- a thousand agents wait on one board). Leaving a claim (key set to null) takes its entry out.
DROP INDEX "task_waits_tree_idx";
--> statement-breakpoint
CREATE INDEX "task_waits_waiting_idx" ON "task_waits" USING btree ("tree_id","registered_at")
  WHERE key is not null;
