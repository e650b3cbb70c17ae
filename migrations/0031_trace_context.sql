-- One trace per tree run, across processes and hosts (issue 42 §3). A fork made while telemetry is
-- on records its call's span as a W3C traceparent in the data of the call's `tool_result`; this
-- trigger copies it onto the child's row in the same statement (warren_fork_batch inserts both),
-- so whichever worker claims the child finds it with the row and the child's spans descend from
-- its parent's `fork` span. The WHEN keeps the trigger off every other event.
ALTER TABLE "agents" ADD COLUMN "trace_context" text;
--> statement-breakpoint
CREATE FUNCTION "warren_fork_trace"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE agents SET trace_context = NEW.data->>'traceparent'
   WHERE id = (NEW.content::jsonb->>'agent_id')::uuid AND parent_id = NEW.agent_id
     AND trace_context IS NULL;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "events_fork_trace" AFTER INSERT ON "events" FOR EACH ROW
  WHEN (NEW.kind = 'tool_result' AND NEW.data->>'name' = 'fork' AND NEW.data ? 'traceparent')
  EXECUTE FUNCTION "warren_fork_trace"();
--> statement-breakpoint
-- A trigger's function, never called directly: closed to PUBLIC like every warren function (0021).
REVOKE EXECUTE ON FUNCTION "warren_fork_trace"() FROM PUBLIC;
