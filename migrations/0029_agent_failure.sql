-- A failed agent is never `idle` (issue 40 §6). A turn whose model requests failed for good (404,
-- 401, a context error, retries spent) ends in an `error` event marked `failed`; its message is
-- kept on the agent as `failure` until the agent's next turn starts (its next `user` or `mail_in`
-- event). The agent stays `idle` in `state` — it takes mail and runs again like any idle agent —
-- and readers say `failed` for an idle agent with a failure (a fan-in's entry, the panel, ls).
-- The trigger's WHEN keeps it off every other event; the update touches the row only when the
-- value changes (set on a failure, cleared by the first turn after one).
ALTER TABLE "agents" ADD COLUMN "failure" text;
--> statement-breakpoint
CREATE FUNCTION "warren_agent_failure"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  failed text := CASE WHEN NEW.kind = 'error' THEN NEW.content END;
BEGIN
  UPDATE agents SET failure = failed
   WHERE id = NEW.agent_id AND failure IS DISTINCT FROM failed;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "events_agent_failure" AFTER INSERT ON "events" FOR EACH ROW
  WHEN ((NEW.kind = 'error' AND NEW.data ? 'failed') OR NEW.kind IN ('user', 'mail_in'))
  EXECUTE FUNCTION "warren_agent_failure"();
--> statement-breakpoint
-- A trigger's function, never called directly: closed to PUBLIC like every warren function (0021).
REVOKE EXECUTE ON FUNCTION "warren_agent_failure"() FROM PUBLIC;
