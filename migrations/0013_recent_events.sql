-- A page of an agent's newest history (src/agents/events.ts listRecentEvents), read backwards
-- along events_agent_idx whatever the planner believes the agent's row count to be. With the
-- statistics of an average agent (a few dozen events, or an agent written since the last
-- ANALYZE), a page of 200 looked larger than the whole history, and the plan was a bitmap scan of
-- every event of the agent and a sort: 2.2 ms for 10,000 events instead of 0.3 ms for the page.
-- A function's SET applies while its body is planned; without bitmap scans the ordered index
-- scan is the cheapest plan that remains (a sequential scan and a sort costs the whole table).
CREATE FUNCTION "warren_recent_events"(p_agent uuid, p_before bigint, p_limit int)
  RETURNS SETOF events LANGUAGE sql STABLE
  SET enable_bitmapscan = off
AS $$
  SELECT * FROM events
   WHERE agent_id = p_agent AND id < coalesce(p_before, 9223372036854775807)
   ORDER BY id DESC
   LIMIT p_limit
$$;
