-- The task board (SPEC §3, issue 30): one board per tree. A claim and a completion commit with the
-- calling tool's keyed, lease-fenced tool_result (src/tasks/board.ts); the keys here say one task
-- per claiming call and one completion per finishing call. Every change is told on the tree's
-- task channel (claimers waiting for work, the TUI's board), and a task whose holder dies goes
-- back to pending, whichever path killed it (a kill cascade, a budget, a reap of a dead tree).
CREATE TABLE "tasks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tree_id" uuid NOT NULL,
	"title" text NOT NULL,
	"detail" text,
	"depends_on" uuid[] DEFAULT '{}'::uuid[] NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"created_by" uuid,
	"claimed_by" uuid,
	"claim_key" text,
	"claim_epoch" bigint,
	"done_key" text,
	"result" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"claimed_at" timestamp with time zone,
	"done_at" timestamp with time zone,
	CONSTRAINT "tasks_state_check" CHECK (state in ('pending', 'claimed', 'done', 'failed'))
);
--> statement-breakpoint
CREATE INDEX "tasks_tree_idx" ON "tasks" USING btree ("tree_id","created_at");--> statement-breakpoint
CREATE INDEX "tasks_claimed_by_idx" ON "tasks" USING btree ("claimed_by") WHERE state = 'claimed';--> statement-breakpoint
CREATE UNIQUE INDEX "tasks_claim_key_idx" ON "tasks" USING btree ("claim_key");--> statement-breakpoint
CREATE UNIQUE INDEX "tasks_done_key_idx" ON "tasks" USING btree ("done_key");--> statement-breakpoint
CREATE FUNCTION "warren_task_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('warren_tasks_' || NEW.tree_id::text, NEW.state);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "tasks_notify" AFTER INSERT OR UPDATE OF "state" ON "tasks"
  FOR EACH ROW EXECUTE FUNCTION "warren_task_notify"();
--> statement-breakpoint
CREATE FUNCTION "warren_task_release"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE tasks SET state = 'pending', claimed_by = NULL, claim_key = NULL, claim_epoch = NULL,
                   claimed_at = NULL
   WHERE claimed_by = NEW.id AND state = 'claimed';
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "agents_release_tasks" AFTER UPDATE OF "state" ON "agents"
  FOR EACH ROW
  WHEN (NEW.state = 'dead' AND OLD.state IS DISTINCT FROM 'dead')
  EXECUTE FUNCTION "warren_task_release"();
--> statement-breakpoint
-- As 0021: no role but warren's own may call warren's functions (test/security/db-roles.test.ts).
REVOKE EXECUTE ON FUNCTION "warren_task_notify"(), "warren_task_release"() FROM PUBLIC;
