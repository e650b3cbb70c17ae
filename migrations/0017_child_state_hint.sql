-- A child's state change is told on its parent's channel too (issue 15: fan-in). A fan-in `wait`
-- returns when each listed child has answered, gone idle or died; it used to LISTEN on every
-- child's channel for the state changes and UNLISTEN them after, two statements per child on the
-- listener's connection. Now it LISTENs only on its own channel, where this trigger says `child`
-- whenever a child enters or leaves idle or dead — the changes that move a fan-in entry — from
-- whichever statement made the change (a turn's end, an answer that ends it, a kill, a wake).
-- Delivered on commit like every NOTIFY; the rows stay the truth.
CREATE FUNCTION "warren_tell_parent"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('agent_event_' || NEW.parent_id::text, 'child');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "agents_tell_parent" AFTER UPDATE OF "state" ON "agents"
  FOR EACH ROW
  WHEN (NEW.parent_id IS NOT NULL AND OLD.state IS DISTINCT FROM NEW.state
        AND (OLD.state IN ('idle', 'dead') OR NEW.state IN ('idle', 'dead')))
  EXECUTE FUNCTION "warren_tell_parent"();
