-- An answer without calls ends its agent's turn in the statement that records it (issue 15: one
-- round trip and one commit fewer a turn). The record-answer statement (src/runtime/
-- record-answer.ts) calls this once it has inserted the answer: the counters and the activity
-- line as that statement used to set them, then, when asked, the end of the turn exactly as
-- warren_turn_end (0012): the row locked, the lease checked, idle in a command of its own unless
-- mail is pending. Its commands run after the statement's insert, each with a fresh snapshot.
CREATE FUNCTION "warren_answered"(p_agent uuid, p_input bigint, p_output bigint, p_cached bigint,
                                  p_reasoning bigint, p_activity text, p_turn_start bigint,
                                  p_end boolean, p_owner text, p_epoch bigint, p_channel text)
  RETURNS text LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  UPDATE agents SET input_tokens = input_tokens + p_input,
                    output_tokens = output_tokens + p_output,
                    cached_tokens = cached_tokens + p_cached,
                    reasoning_tokens = reasoning_tokens + p_reasoning,
                    last_activity_at = now(),
                    -- A turn counts once, with its first answer (a resumed turn, or a retry that
                    -- finds its answer recorded, is not counted again).
                    turns = turns + (coalesce(turn_counted_event < p_turn_start,
                                              p_turn_start IS NOT NULL))::int,
                    turn_counted_event = greatest(turn_counted_event, p_turn_start),
                    -- As setActivity writes it: only while the agent runs or waits.
                    activity = CASE WHEN p_activity IS NOT NULL AND state IN ('running', 'waiting')
                                    THEN p_activity ELSE activity END
   WHERE id = p_agent;
  IF NOT p_end THEN
    RETURN NULL;
  END IF;
  RETURN warren_turn_end(p_agent, p_owner, p_epoch, p_channel);
END $$;
