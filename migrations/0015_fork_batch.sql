-- A response's forks in one statement (issue 15): a fan-in of 100 forks was 100 calls of
-- warren_fork (0012), each taking the root's lock and committing on its own, one after another.
-- warren_fork_batch locks the root and the parent once, then forks each item in a command of its
-- own (as warren_fork did: each command's snapshot follows the lock and the items before it, so
-- the counts see them), and commits once. warren_fork_locked is warren_fork's forking, unchanged.
CREATE FUNCTION "warren_fork_locked"(
  p_parent uuid, v_tree uuid, p_name text, p_max_children int, p_max_living int,
  p_max_depth int, p_lease_owner text, p_prompt text, p_system_prompt text, p_model text,
  p_profile text, p_cwd text, p_budget jsonb, p_context text, p_cutoff bigint, p_policy jsonb,
  p_key text, p_epoch bigint, p_data jsonb, p_channel text)
  RETURNS TABLE (known boolean, parent_name text, parent_state text, parent_depth int,
                 parent_lease_owner text, children int, living int, twins int, child_row jsonb,
                 woken int, event_id bigint, result_text text)
  LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
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
--> statement-breakpoint
-- Every fork goes through warren_fork_batch now (one fork is a batch of one).
DROP FUNCTION "warren_fork"(uuid, uuid, text, int, int, int, text, text, text, text, text, text,
                            jsonb, text, bigint, jsonb, text, bigint, jsonb, text);
--> statement-breakpoint
-- p_items: [{name, prompt, system_prompt, model, profile, cwd, budget, context, cutoff, policy,
-- key, data}], one per fork (src/agents/tree.ts runForks); the parent, lease and epoch are the
-- batch's. An item whose key is recorded already (an earlier attempt committed, its reply lost)
-- is not forked again: it comes back as `recorded`, with that result. The check runs under the
-- parent's lock, which every fork of the parent takes, so no fork with the key can commit
-- between it and the insert.
CREATE FUNCTION "warren_fork_batch"(
  p_parent uuid, p_tree uuid, p_max_children int, p_max_living int, p_max_depth int,
  p_lease_owner text, p_epoch bigint, p_items jsonb, p_channel text)
  RETURNS TABLE (ord int, recorded boolean, known boolean, parent_name text, parent_state text,
                 parent_depth int, parent_lease_owner text, children int, living int, twins int,
                 child_row jsonb, woken int, event_id bigint, result_text text)
  LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_tree uuid := coalesce(p_tree, (SELECT tree_id FROM agents WHERE id = p_parent));
  v_item jsonb;
  v_ord int;
  v_event events%ROWTYPE;
BEGIN
  PERFORM 1 FROM agents WHERE id IN (v_tree, p_parent)
   ORDER BY (id <> tree_id), id FOR NO KEY UPDATE;
  FOR v_item, v_ord IN SELECT value, ordinality FROM jsonb_array_elements(p_items) WITH ORDINALITY
  LOOP
    SELECT * INTO v_event FROM events
     WHERE agent_id = p_parent AND key = v_item->>'key' AND v_item->>'key' IS NOT NULL;
    IF FOUND THEN
      RETURN QUERY SELECT v_ord::int, true, true, NULL::text, NULL::text, NULL::int, NULL::text,
                          NULL::int, NULL::int, NULL::int, NULL::jsonb, 0, v_event.id,
                          v_event.content;
      CONTINUE;
    END IF;
    RETURN QUERY SELECT v_ord::int, false, f.* FROM warren_fork_locked(
      p_parent, v_tree, v_item->>'name', p_max_children, p_max_living, p_max_depth,
      p_lease_owner, v_item->>'prompt', v_item->>'system_prompt', v_item->>'model',
      v_item->>'profile', v_item->>'cwd', v_item->'budget', v_item->>'context',
      (v_item->>'cutoff')::bigint, v_item->'policy', v_item->>'key', p_epoch, v_item->'data',
      p_channel) f;
  END LOOP;
END $$;
