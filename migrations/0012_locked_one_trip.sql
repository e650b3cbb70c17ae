-- A row lock and the statement that must follow it, in one round trip. The end of a turn and a
-- fork lock rows and then read what committed while they waited for them; one statement cannot,
-- since its snapshot predates the wait (only the locked rows are re-read). In READ COMMITTED a
-- VOLATILE function takes a fresh snapshot for each command it runs, so a lock command followed
-- by the statement gives the guarantee of two statements in one call (on its own, the call is
-- its own transaction): test/runtime/turn-end.test.ts and the fork races of
-- test/agents/tree.test.ts fail with the two merged.

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
--> statement-breakpoint
-- A fork (src/agents/tree.ts, forkAgentIn): the tree's root, then the parent, FOR NO KEY UPDATE
-- (src/agents/lock-order.ts; the root serialises forks and kills within a tree); then, in a
-- command of its own whose snapshot holds every fork committed before, the checks and counts,
-- and only when they allow it the child, its task and wake-up (on p_channel), the parent's
-- `fork` line and, with p_key, the call's `tool_result` counted as countedCte (src/agents/events.ts)
-- does. The parent's row comes back for the caller to say which check refused (known false: no
-- such agent in the tree). p_tree null: the parent's tree; p_lease_owner null: no lease checked;
-- p_cutoff null with p_context 'inherit': all the parent's events so far.
CREATE FUNCTION "warren_fork"(
  p_parent uuid, p_tree uuid, p_name text, p_max_children int, p_max_living int,
  p_max_depth int, p_lease_owner text, p_prompt text, p_system_prompt text, p_model text,
  p_profile text, p_cwd text, p_budget jsonb, p_context text, p_cutoff bigint, p_policy jsonb,
  p_key text, p_epoch bigint, p_data jsonb, p_channel text)
  RETURNS TABLE (known boolean, parent_name text, parent_state text, parent_depth int,
                 parent_lease_owner text, children int, living int, twins int, child_row jsonb,
                 woken int, event_id bigint, result_text text)
  LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_tree uuid := coalesce(p_tree, (SELECT tree_id FROM agents WHERE id = p_parent));
BEGIN
  -- Roots first, then by id: LOCK_ORDER_TEXT.
  PERFORM 1 FROM agents WHERE id IN (v_tree, p_parent)
   ORDER BY (id <> tree_id), id FOR NO KEY UPDATE;
  RETURN QUERY
    WITH pa AS (
      SELECT id, name, state, depth, lease_owner, model, cwd, policy
        FROM agents WHERE id = p_parent AND tree_id = v_tree
    ), c AS (
      SELECT count(*) FILTER (WHERE parent_id = p_parent)::int AS children,
             count(*)::int AS living,
             count(*) FILTER (WHERE parent_id = p_parent AND name = p_name)::int AS twins
        FROM agents WHERE tree_id = v_tree AND state <> 'dead'
    ), p AS (
      SELECT pa.* FROM pa, c
       WHERE (p_lease_owner IS NULL OR pa.lease_owner = p_lease_owner)
         AND pa.state <> 'dead' AND pa.depth < p_max_depth
         AND c.twins = 0 AND c.children < p_max_children AND c.living < p_max_living
    ), child AS (
      INSERT INTO agents (tree_id, parent_id, name, depth, state, system_prompt, model, profile,
                          cwd, budget, context_mode, context_parent_event, policy)
      SELECT v_tree, p.id, p_name, p.depth + 1,
             CASE WHEN p_prompt IS NULL THEN 'idle' ELSE 'running' END, p_system_prompt,
             coalesce(p_model, p.model), p_profile, coalesce(p_cwd, p.cwd), p_budget, p_context,
             CASE WHEN p_context = 'inherit' THEN coalesce(p_cutoff,
               (SELECT coalesce(max(e.id), 0) + 1 FROM events e WHERE e.agent_id = p.id)) END,
             -- Narrowed, never widened: the parent's policies, then the child's own (its profile's).
             p.policy || p_policy
        FROM p
      RETURNING *
    ), forked AS (
      INSERT INTO events (agent_id, tree_id, kind, content, data)
      SELECT p.id, v_tree, 'fork', 'forked ' || child.name || ' ' || left(child.id::text, 8),
             jsonb_build_object('agent_id', child.id, 'name', child.name)
        FROM child, p
    ), task AS (
      INSERT INTO events (agent_id, tree_id, kind, content)
      SELECT child.id, child.tree_id, 'user', p_prompt FROM child WHERE p_prompt IS NOT NULL
    ), wake AS (
      SELECT pg_notify(p_channel, child.id::text) FROM child WHERE p_prompt IS NOT NULL
    ), counted AS (
      UPDATE agents SET tool_calls = tool_calls + 1, last_activity_at = now(),
                        lease_epoch = coalesce(p_epoch, lease_epoch)
       WHERE id = p_parent AND p_key IS NOT NULL AND EXISTS (SELECT 1 FROM child)
      RETURNING id
    ), result AS (
      -- The same text as JSON.stringify({agent_id, name}).
      INSERT INTO events (agent_id, tree_id, kind, content, data, key, epoch)
      SELECT p_parent, v_tree, 'tool_result',
             '{"agent_id":' || to_json(child.id::text)::text || ',"name":' || to_json(child.name)::text || '}',
             p_data, p_key, p_epoch
        FROM child WHERE p_key IS NOT NULL
      RETURNING id, content
    )
    SELECT pa.id IS NOT NULL, pa.name, pa.state, pa.depth, pa.lease_owner,
           c.children, c.living, c.twins, (SELECT to_jsonb(child) FROM child),
           (SELECT count(*)::int FROM wake), (SELECT id FROM result), (SELECT content FROM result)
      FROM c LEFT JOIN pa ON true;
END $$;
