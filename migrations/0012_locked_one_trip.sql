-- A row lock and the statement that must follow it, in one round trip. The end of a turn locks
-- a row and then reads what committed while it waited for it; one statement cannot, since its
-- snapshot predates the wait (only the locked row is re-read). In READ COMMITTED a VOLATILE
-- function takes a fresh snapshot for each command it runs, so a lock command followed by the
-- statement gives the guarantee of two statements in one call: test/runtime/turn-end.test.ts
-- fails with the two merged.

-- The end of a turn (src/runtime/turn-end.ts): the agent's row FOR UPDATE, which waits for a
-- concurrent send's FOR KEY SHARE (src/mail/send.ts); then, with no unconsumed mail at all, idle:
-- lease, interrupt request, activity and wait status cleared, listeners told on p_channel.
-- Returns 'idle' (also for a dead or missing agent: nothing changed), 'pending' (mail waits;
-- nothing changed, the caller takes it in by its own transaction) or 'lost' (the lease p_owner,
-- p_epoch is no longer held; null p_owner: none to check).
CREATE FUNCTION "warren_turn_end"(p_agent uuid, p_owner text, p_epoch bigint, p_channel text)
  RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_state text;
  v_owner text;
  v_epoch bigint;
BEGIN
  SELECT state, lease_owner, lease_epoch INTO v_state, v_owner, v_epoch
    FROM agents WHERE id = p_agent FOR UPDATE;
  IF p_owner IS NOT NULL AND (v_owner IS DISTINCT FROM p_owner OR v_epoch IS DISTINCT FROM p_epoch) THEN
    RETURN 'lost';
  END IF;
  IF v_state IS NULL OR v_state = 'dead' THEN
    RETURN 'idle';
  END IF;
  -- A command of its own: its snapshot holds the mail of every send the lock waited for.
  UPDATE agents SET state = 'idle', lease_owner = NULL, lease_expires_at = NULL,
                    interrupt_requested_at = NULL, last_activity_at = now(),
                    activity = NULL, wait_status = NULL
   WHERE id = p_agent
     AND NOT EXISTS (SELECT 1 FROM mail WHERE to_id = p_agent AND consumed_at IS NULL);
  IF NOT FOUND THEN
    RETURN 'pending';
  END IF;
  PERFORM pg_notify(p_channel || p_agent::text, 'state');
  RETURN 'idle';
END $$;
