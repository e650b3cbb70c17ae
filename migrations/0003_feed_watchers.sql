CREATE TABLE "feed_watchers" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tree_id" uuid NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "feed_watchers_tree_idx" ON "feed_watchers" USING btree ("tree_id","expires_at");--> statement-breakpoint
-- The feed triggers (0002) NOTIFY only trees with an open feed: a NOTIFY serialises commits on
-- Postgres's notify queue lock, so unwatched trees (headless runs, workers, benchmarks) skip it.
CREATE OR REPLACE FUNCTION "warren_feed_agent"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM feed_watchers w WHERE w.tree_id = NEW.tree_id AND w.expires_at > now()) THEN
    PERFORM pg_notify('warren_tree_' || NEW.tree_id::text, 'a:' || NEW.id::text);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "warren_feed_event"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  tree uuid;
BEGIN
  -- Most writes happen with no feed open anywhere: skip the agent lookup then.
  IF NOT EXISTS (SELECT 1 FROM feed_watchers) THEN
    RETURN NULL;
  END IF;
  SELECT a.tree_id INTO tree FROM agents a WHERE a.id = NEW.agent_id;
  IF EXISTS (SELECT 1 FROM feed_watchers w WHERE w.tree_id = tree AND w.expires_at > now()) THEN
    PERFORM pg_notify('warren_tree_' || tree::text, 'e:' || NEW.agent_id::text || ':' || NEW.id::text);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "warren_feed_input"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM feed_watchers w WHERE w.tree_id = NEW.tree_id AND w.expires_at > now()) THEN
    PERFORM pg_notify('warren_tree_' || NEW.tree_id::text, 'i:' || NEW.to_id::text);
  END IF;
  RETURN NULL;
END $$;
