ALTER TABLE "agents" ADD COLUMN "cached_tokens" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "reasoning_tokens" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The feed's agent trigger (0002) lists the columns a person sees; the new counters join them.
DROP TRIGGER "agents_feed_update" ON "agents";
--> statement-breakpoint
CREATE TRIGGER "agents_feed_update" AFTER UPDATE ON "agents" FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state
     OR OLD.name IS DISTINCT FROM NEW.name
     OR OLD.model IS DISTINCT FROM NEW.model
     OR OLD.profile IS DISTINCT FROM NEW.profile
     OR OLD.tool_calls IS DISTINCT FROM NEW.tool_calls
     OR OLD.input_tokens IS DISTINCT FROM NEW.input_tokens
     OR OLD.output_tokens IS DISTINCT FROM NEW.output_tokens
     OR OLD.cached_tokens IS DISTINCT FROM NEW.cached_tokens
     OR OLD.reasoning_tokens IS DISTINCT FROM NEW.reasoning_tokens
     OR OLD.turns IS DISTINCT FROM NEW.turns
     OR OLD.activity IS DISTINCT FROM NEW.activity
     OR OLD.wait_status IS DISTINCT FROM NEW.wait_status
     OR OLD.reaped_at IS DISTINCT FROM NEW.reaped_at
     OR OLD.last_activity_at IS DISTINCT FROM NEW.last_activity_at
     OR OLD.ended_at IS DISTINCT FROM NEW.ended_at)
  EXECUTE FUNCTION "warren_feed_agent"();
