-- Every table carries tree_id (SPEC §6: a tree is the unit of distribution). events and
-- agent_streams take it from their agent: filled by a trigger when an insert does not give it,
-- so no write path can leave it out.
ALTER TABLE "events" ADD COLUMN "tree_id" uuid;--> statement-breakpoint
ALTER TABLE "agent_streams" ADD COLUMN "tree_id" uuid;--> statement-breakpoint
UPDATE "events" e SET "tree_id" = a.tree_id FROM "agents" a WHERE a.id = e.agent_id;--> statement-breakpoint
UPDATE "agent_streams" s SET "tree_id" = a.tree_id FROM "agents" a WHERE a.id = s.agent_id;--> statement-breakpoint
DELETE FROM "events" WHERE "tree_id" IS NULL;--> statement-breakpoint
DELETE FROM "agent_streams" WHERE "tree_id" IS NULL;--> statement-breakpoint
CREATE FUNCTION "warren_fill_tree_id"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.tree_id := (SELECT tree_id FROM agents WHERE id = NEW.agent_id);
  IF NEW.tree_id IS NULL THEN
    RAISE EXCEPTION 'no agent %', NEW.agent_id USING ERRCODE = '23503';
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "events_tree_id" BEFORE INSERT ON "events" FOR EACH ROW
  WHEN (NEW.tree_id IS NULL) EXECUTE FUNCTION "warren_fill_tree_id"();
--> statement-breakpoint
CREATE TRIGGER "agent_streams_tree_id" BEFORE INSERT ON "agent_streams" FOR EACH ROW
  WHEN (NEW.tree_id IS NULL) EXECUTE FUNCTION "warren_fill_tree_id"();
--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "tree_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "agent_streams" ALTER COLUMN "tree_id" SET NOT NULL;
