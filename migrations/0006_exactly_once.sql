ALTER TABLE "agents" ADD COLUMN "lease_epoch" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "turn_counted_event" bigint;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "key" text;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "epoch" bigint;--> statement-breakpoint
CREATE UNIQUE INDEX "events_key_idx" ON "events" USING btree ("agent_id","key") WHERE key is not null;--> statement-breakpoint
-- Fencing (README "Exactly once by construction"): a turn stamps the events it writes with the
-- lease epoch it claimed; the insert is refused (SQLSTATE WL001) unless that is still the agent's
-- epoch. FOR KEY SHARE conflicts with a claim's FOR UPDATE: a takeover either committed first
-- (and this sees its new epoch) or skips the row until this transaction has ended.
CREATE FUNCTION "warren_fence_event"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM agents WHERE id = NEW.agent_id AND lease_epoch = NEW.epoch FOR KEY SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'lease of agent % lost (epoch % is stale)', NEW.agent_id, NEW.epoch
      USING ERRCODE = 'WL001';
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "events_fence" BEFORE INSERT ON "events" FOR EACH ROW
  WHEN (NEW.epoch IS NOT NULL) EXECUTE FUNCTION "warren_fence_event"();
--> statement-breakpoint
-- A turn's own updates of its agent row set lease_epoch to the epoch it claimed; only a claim
-- raises it, so an update that would lower it comes from a worker that lost the lease.
CREATE FUNCTION "warren_fence_agent"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'lease of agent % lost (epoch % is stale)', NEW.id, NEW.lease_epoch
    USING ERRCODE = 'WL001';
END $$;
--> statement-breakpoint
CREATE TRIGGER "agents_fence" BEFORE UPDATE ON "agents" FOR EACH ROW
  WHEN (NEW.lease_epoch < OLD.lease_epoch) EXECUTE FUNCTION "warren_fence_agent"();
