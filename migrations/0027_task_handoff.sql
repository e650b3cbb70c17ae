-- A task handed to a blocked claimer in the add's own statement (issue 30: a claim wakes within
-- 2× a raw NOTIFY round trip). A task_claim that finds nothing ready registers here before it
-- blocks (src/tasks/board.ts, CLAIM_TASK); a task_add whose task is ready then records the
-- claim's result under the claim call's key, inserts the task already claimed and NOTIFYs the
-- result on the claimer's channel, so the claimer returns without a statement of its own
-- (ADD_TASK). events_key_idx admits one result per call, whoever writes it: a claim answered
-- meanwhile makes the handoff's insert do nothing, and the task then goes in pending.
--
-- One row per agent that ever blocked in a claim, kept: registering sets `key` and leaving
-- clears it, updates of columns no index covers (HOT), as mail_waits (migration 0016).
CREATE TABLE "task_waits" (
	"agent_id" uuid PRIMARY KEY NOT NULL,
	"tree_id" uuid NOT NULL,
	"key" text,
	"data" jsonb NOT NULL,
	"lease_owner" text,
	"epoch" bigint,
	"registered_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "task_waits_tree_idx" ON "task_waits" USING btree ("tree_id");
--> statement-breakpoint
-- The pending tasks of a board, oldest first: a claim's pick and an add's "is an older task
-- ready?" read only these, not every task the board ever had.
CREATE INDEX "tasks_pending_idx" ON "tasks" USING btree ("tree_id","created_at")
  WHERE state = 'pending';
--> statement-breakpoint
-- A task's insert tells its board itself, in the add's statement (ADD_TASK): `pending`, or the
-- claim's result when the task was handed to a blocked claimer, one NOTIFY for both. The trigger
-- now tells changes of state only (a claim, a completion, a release).
DROP TRIGGER "tasks_notify" ON "tasks";
--> statement-breakpoint
CREATE TRIGGER "tasks_notify" AFTER UPDATE OF "state" ON "tasks"
  FOR EACH ROW EXECUTE FUNCTION "warren_task_notify"();
--> statement-breakpoint
-- A key is set once a task is claimed (claim_key) or finished (done_key): indexed only then, so
-- an add does not write a null entry into either.
DROP INDEX "tasks_claim_key_idx";
--> statement-breakpoint
CREATE UNIQUE INDEX "tasks_claim_key_idx" ON "tasks" USING btree ("claim_key")
  WHERE claim_key IS NOT NULL;
--> statement-breakpoint
DROP INDEX "tasks_done_key_idx";
--> statement-breakpoint
CREATE UNIQUE INDEX "tasks_done_key_idx" ON "tasks" USING btree ("done_key")
  WHERE done_key IS NOT NULL;
