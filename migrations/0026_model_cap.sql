-- Issue 30 §3: a model server's capacity, shared. `max_concurrent_requests` caps the model
-- requests in flight for one server across every process on the database (src/runtime/model-cap.ts).
-- A slot is a row of model_slots, bound to its agent's lease: it counts only while the agent's
-- lease is held with the epoch it was taken under, so a holder that crashes (or loses its lease,
-- or is reaped) frees its slot when the lease ends, without anyone releasing it. Waiters queue
-- as rows too and are granted in ticket order (FIFO) under the server row's lock, told by NOTIFY
-- on warren_model_slot (payload: the granted ticket, or "*": everyone re-check). A 429 with
-- Retry-After sets the server's paused_until: no grant before it, in any process.
CREATE TABLE "model_servers" (
	"key" text PRIMARY KEY NOT NULL,
	"cap" integer NOT NULL,
	"paused_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "model_slots" (
	"agent_id" uuid PRIMARY KEY NOT NULL,
	"server" text NOT NULL,
	"ticket" bigint NOT NULL,
	"epoch" bigint NOT NULL,
	"granted" boolean DEFAULT false NOT NULL,
	"queued_at" timestamp with time zone DEFAULT now() NOT NULL,
	"granted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "model_slots_server_idx" ON "model_slots" USING btree ("server","granted","ticket");--> statement-breakpoint
CREATE SEQUENCE "model_slot_tickets";
--> statement-breakpoint
-- With the server row locked by the caller: drops the rows whose lease ended, then grants the
-- oldest waiters as many slots as are free (none while paused), telling each its ticket but
-- p_quiet (the caller's own, answered directly: an uncontended request sends no NOTIFY).
CREATE FUNCTION "warren_model_promote"(p_server text, p_quiet bigint) RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
  v_cap integer;
  v_paused timestamptz;
  v_free integer;
  v_ticket bigint;
BEGIN
  SELECT cap, paused_until INTO v_cap, v_paused FROM model_servers WHERE key = p_server;
  DELETE FROM model_slots s
   WHERE s.server = p_server
     AND NOT EXISTS (SELECT 1 FROM agents a
                      WHERE a.id = s.agent_id AND a.lease_epoch = s.epoch
                        AND a.lease_owner IS NOT NULL AND a.lease_expires_at > now());
  IF v_paused > now() THEN RETURN; END IF;
  v_free := v_cap - (SELECT count(*) FROM model_slots WHERE server = p_server AND granted);
  IF v_free <= 0 THEN RETURN; END IF;
  FOR v_ticket IN
    UPDATE model_slots s SET granted = true, granted_at = now()
      FROM (SELECT agent_id FROM model_slots
             WHERE server = p_server AND NOT granted
             ORDER BY ticket LIMIT v_free) n
     WHERE s.agent_id = n.agent_id
    RETURNING s.ticket
  LOOP
    IF v_ticket IS DISTINCT FROM p_quiet THEN
      PERFORM pg_notify('warren_model_slot', v_ticket::text);
    END IF;
  END LOOP;
END $$;
--> statement-breakpoint
-- One round trip per request when a slot is free. p_ticket null: a new place at the end of the
-- queue; else the caller's place (kept while it waits). Answers whether the slot is held now, the
-- ticket, how long the server is still paused (ms) and `lost` when the caller's lease has ended.
CREATE FUNCTION "warren_model_acquire"(p_server text, p_cap integer, p_agent uuid, p_epoch bigint,
                                       p_ticket bigint)
RETURNS TABLE (granted boolean, ticket bigint, paused_ms float8, lost boolean)
LANGUAGE plpgsql
AS $$
DECLARE
  v_ticket bigint := p_ticket;
  v_paused timestamptz;
  v_cap integer;
  v_granted boolean;
BEGIN
  -- Every grant of one server is decided under this lock, each statement with a fresh snapshot.
  SELECT m.paused_until, m.cap INTO v_paused, v_cap FROM model_servers m
   WHERE m.key = p_server FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO model_servers AS m (key, cap) VALUES (p_server, p_cap) ON CONFLICT (key) DO NOTHING;
    SELECT m.paused_until, m.cap INTO v_paused, v_cap FROM model_servers m
     WHERE m.key = p_server FOR UPDATE;
  END IF;
  IF v_cap <> p_cap THEN
    UPDATE model_servers m SET cap = p_cap WHERE m.key = p_server;
  END IF;
  IF v_ticket IS NULL THEN
    -- A new request: granted in the same write when a slot is free and nobody waits (the usual
    -- case: one row written), else queued at the end. A row of the agent's earlier request
    -- (its release not yet arrived) is replaced, and not counted.
    v_ticket := nextval('model_slot_tickets');
    DELETE FROM model_slots s
     WHERE s.server = p_server
       AND NOT EXISTS (SELECT 1 FROM agents a
                        WHERE a.id = s.agent_id AND a.lease_epoch = s.epoch
                          AND a.lease_owner IS NOT NULL AND a.lease_expires_at > now());
    v_granted := coalesce(v_paused <= now(), true)
      AND NOT EXISTS (SELECT 1 FROM model_slots s
                       WHERE s.server = p_server AND NOT s.granted AND s.agent_id <> p_agent)
      AND (SELECT count(*) FROM model_slots s
            WHERE s.server = p_server AND s.granted AND s.agent_id <> p_agent) < p_cap;
    INSERT INTO model_slots AS s (agent_id, server, ticket, epoch, granted, granted_at)
      VALUES (p_agent, p_server, v_ticket, p_epoch, v_granted,
              CASE WHEN v_granted THEN now() END)
      ON CONFLICT (agent_id) DO UPDATE
        SET server = excluded.server, ticket = excluded.ticket, epoch = excluded.epoch,
            granted = excluded.granted, queued_at = now(), granted_at = excluded.granted_at;
    IF v_granted THEN
      RETURN QUERY SELECT true, v_ticket, 0::float8, false;
      RETURN;
    END IF;
  ELSIF NOT EXISTS (SELECT 1 FROM model_slots s WHERE s.agent_id = p_agent AND s.ticket = v_ticket) THEN
    -- Its place was dropped (the lease check below says whether the agent still may ask).
    INSERT INTO model_slots AS s (agent_id, server, ticket, epoch)
      VALUES (p_agent, p_server, v_ticket, p_epoch)
      ON CONFLICT (agent_id) DO UPDATE
        SET server = excluded.server, ticket = excluded.ticket, epoch = excluded.epoch,
            granted = false, queued_at = now(), granted_at = NULL;
  END IF;
  PERFORM warren_model_promote(p_server, v_ticket);
  SELECT s.granted INTO v_granted FROM model_slots s
   WHERE s.agent_id = p_agent AND s.ticket = v_ticket;
  RETURN QUERY SELECT coalesce(v_granted, false), v_ticket,
    greatest(0, extract(epoch FROM (v_paused - now())) * 1000)::float8, v_granted IS NULL;
END $$;
--> statement-breakpoint
-- Gives a slot (or a place in the queue) back and hands free slots to the oldest waiters.
CREATE FUNCTION "warren_model_release"(p_server text, p_agent uuid, p_ticket bigint) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
  PERFORM 1 FROM model_servers WHERE key = p_server FOR UPDATE;
  DELETE FROM model_slots WHERE agent_id = p_agent AND ticket = p_ticket;
  IF EXISTS (SELECT 1 FROM model_slots WHERE server = p_server AND NOT granted) THEN
    PERFORM warren_model_promote(p_server, NULL);
  END IF;
END $$;
--> statement-breakpoint
-- A 429 with Retry-After: no grant before the time the server asked for, and every waiter
-- re-checks (to learn how long).
CREATE FUNCTION "warren_model_pause"(p_server text, p_ms float8) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
  UPDATE model_servers
     SET paused_until = greatest(coalesce(paused_until, now()),
                                 now() + make_interval(secs => p_ms / 1000))
   WHERE key = p_server;
  PERFORM pg_notify('warren_model_slot', '*');
END $$;
--> statement-breakpoint
-- As 0021: no role but warren's own may call warren's functions (test/security/db-roles.test.ts).
REVOKE EXECUTE ON FUNCTION "warren_model_promote"(text, bigint),
  "warren_model_acquire"(text, integer, uuid, bigint, bigint),
  "warren_model_release"(text, uuid, bigint), "warren_model_pause"(text, float8) FROM PUBLIC;
