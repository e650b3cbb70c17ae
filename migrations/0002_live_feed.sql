CREATE TABLE "agent_streams" (
	"agent_id" uuid PRIMARY KEY NOT NULL,
	"text" text DEFAULT '' NOT NULL,
	"reasoning" text DEFAULT '' NOT NULL,
	"live" boolean DEFAULT true NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "mail" ADD COLUMN "kind" text DEFAULT 'mail' NOT NULL;--> statement-breakpoint
ALTER TABLE "mail" ADD CONSTRAINT "mail_kind_check" CHECK ("mail"."kind" in ('mail', 'input'));--> statement-breakpoint
-- The live feed: one NOTIFY channel per tree (warren_tree_<tree id>) with tiny hints; the rows are
-- the truth. Trigger WHEN clauses keep the cost off rows nobody sees change (lease heartbeats, mail).
CREATE FUNCTION "warren_feed_agent"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('warren_tree_' || NEW.tree_id::text, 'a:' || NEW.id::text);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "agents_feed_insert" AFTER INSERT ON "agents"
  FOR EACH ROW EXECUTE FUNCTION "warren_feed_agent"();
--> statement-breakpoint
CREATE TRIGGER "agents_feed_update" AFTER UPDATE ON "agents" FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state
     OR OLD.name IS DISTINCT FROM NEW.name
     OR OLD.model IS DISTINCT FROM NEW.model
     OR OLD.profile IS DISTINCT FROM NEW.profile
     OR OLD.tool_calls IS DISTINCT FROM NEW.tool_calls
     OR OLD.input_tokens IS DISTINCT FROM NEW.input_tokens
     OR OLD.output_tokens IS DISTINCT FROM NEW.output_tokens
     OR OLD.turns IS DISTINCT FROM NEW.turns
     OR OLD.activity IS DISTINCT FROM NEW.activity
     OR OLD.wait_status IS DISTINCT FROM NEW.wait_status
     OR OLD.reaped_at IS DISTINCT FROM NEW.reaped_at
     OR OLD.last_activity_at IS DISTINCT FROM NEW.last_activity_at
     OR OLD.ended_at IS DISTINCT FROM NEW.ended_at)
  EXECUTE FUNCTION "warren_feed_agent"();
--> statement-breakpoint
CREATE FUNCTION "warren_feed_event"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('warren_tree_' || a.tree_id::text, 'e:' || NEW.agent_id::text || ':' || NEW.id::text)
     FROM agents a WHERE a.id = NEW.agent_id;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "events_feed_insert" AFTER INSERT ON "events"
  FOR EACH ROW EXECUTE FUNCTION "warren_feed_event"();
--> statement-breakpoint
CREATE FUNCTION "warren_feed_input"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('warren_tree_' || NEW.tree_id::text, 'i:' || NEW.to_id::text);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "mail_feed_input" AFTER INSERT OR UPDATE ON "mail" FOR EACH ROW
  WHEN (NEW.kind = 'input')
  EXECUTE FUNCTION "warren_feed_input"();
