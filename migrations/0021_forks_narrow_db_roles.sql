-- Issue 28: forks only narrow, and no function lends its owner's rights.
--
-- agents.caps: what an agent may do (its tool set, file access, sandbox), computed by
-- childCapabilities (src/agents/capabilities.ts) from its parent's caps and what the fork asks,
-- so a grandchild narrows from its parent's effective capabilities, never from the config. NULL
-- on roots and on agents made before this migration: theirs come from the config and profile.
ALTER TABLE "agents" ADD COLUMN "caps" jsonb;
--> statement-breakpoint
-- warren_fork_batch (0018) stores a fork's caps with its row, in the same statement: a child is
-- never running without them.
CREATE OR REPLACE FUNCTION "warren_fork_batch"(
  p_parent uuid, p_tree uuid, p_max_children int, p_max_living int, p_max_depth int,
  p_lease_owner text, p_epoch bigint, p_items jsonb, p_channel text)
  RETURNS TABLE (ord int, recorded boolean, known boolean, parent_name text, parent_state text,
                 parent_depth int, parent_lease_owner text, children int, living int, twins int,
                 child_row jsonb, woken int, event_id bigint, result_text text)
  LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_tree uuid := coalesce(p_tree, (SELECT tree_id FROM agents WHERE id = p_parent));
  v_parent record;
  v_known boolean;
  v_open boolean;
  v_children int;
  v_living int;
  v_names text[];
  v_cutoff bigint;
  v_recorded jsonb;
  v_keys text[] := '{}';
  v_ords int[] := '{}';
  v_seen_children int[] := '{}';
  v_seen_living int[] := '{}';
  v_item jsonb;
  v_ord int;
  v_twins int;
BEGIN
  PERFORM 1 FROM agents WHERE id IN (v_tree, p_parent)
   ORDER BY (id <> tree_id), id FOR NO KEY UPDATE;
  -- Each command from here takes its snapshot after the locks' wait: every fork and kill that
  -- committed before is in it.
  SELECT id, name, state, depth, lease_owner, model, cwd, policy INTO v_parent
    FROM agents WHERE id = p_parent AND tree_id = v_tree;
  v_known := FOUND;
  v_open := v_known AND (p_lease_owner IS NULL OR v_parent.lease_owner = p_lease_owner)
            AND v_parent.state <> 'dead' AND v_parent.depth < p_max_depth;
  SELECT count(*) FILTER (WHERE parent_id = p_parent)::int, count(*)::int,
         coalesce(array_agg(name) FILTER (WHERE parent_id = p_parent), '{}')
    INTO v_children, v_living, v_names
    FROM agents WHERE tree_id = v_tree AND state <> 'dead';
  SELECT coalesce(jsonb_object_agg(e.key, jsonb_build_object('id', e.id, 'content', e.content)), '{}')
    INTO v_recorded
    FROM events e
   WHERE e.agent_id = p_parent
     AND e.key IN (SELECT x->>'key' FROM jsonb_array_elements(p_items) x);
  IF v_open AND EXISTS (SELECT 1 FROM jsonb_array_elements(p_items) x
                        WHERE x->>'context' = 'inherit' AND x->>'cutoff' IS NULL) THEN
    SELECT coalesce(max(e.id), 0) + 1 INTO v_cutoff FROM events e WHERE e.agent_id = p_parent;
  END IF;

  FOR v_item, v_ord IN SELECT value, ordinality FROM jsonb_array_elements(p_items) WITH ORDINALITY
  LOOP
    IF v_item->>'key' IS NOT NULL THEN
      IF v_item->>'key' = ANY (v_keys) THEN
        RAISE EXCEPTION 'fork batch: key % given twice', v_item->>'key' USING ERRCODE = 'WL002';
      END IF;
      v_keys := v_keys || (v_item->>'key');
      IF v_recorded ? (v_item->>'key') THEN
        ord := v_ord; recorded := true; known := true; parent_name := NULL; parent_state := NULL;
        parent_depth := NULL; parent_lease_owner := NULL; children := NULL; living := NULL;
        twins := NULL; child_row := NULL; woken := 0;
        event_id := (v_recorded->(v_item->>'key')->>'id')::bigint;
        result_text := v_recorded->(v_item->>'key')->>'content';
        RETURN NEXT;
        CONTINUE;
      END IF;
    END IF;
    v_twins := CASE WHEN v_item->>'name' = ANY (v_names) THEN 1 ELSE 0 END;
    IF v_open AND v_twins = 0 AND v_children < p_max_children AND v_living < p_max_living THEN
      v_ords := v_ords || v_ord;
      v_seen_children := v_seen_children || v_children;
      v_seen_living := v_seen_living || v_living;
      v_children := v_children + 1;
      v_living := v_living + 1;
      v_names := v_names || (v_item->>'name');
    ELSE
      ord := v_ord; recorded := false; known := v_known; parent_name := v_parent.name;
      parent_state := v_parent.state; parent_depth := v_parent.depth;
      parent_lease_owner := v_parent.lease_owner; children := v_children; living := v_living;
      twins := v_twins; child_row := NULL; woken := 0; event_id := NULL; result_text := NULL;
      RETURN NEXT;
    END IF;
  END LOOP;
  IF cardinality(v_ords) = 0 THEN
    RETURN;
  END IF;

  RETURN QUERY
    WITH plan AS (
      SELECT a.ord, x.value AS it, a.children, a.living
        FROM unnest(v_ords, v_seen_children, v_seen_living) AS a(ord, children, living)
        JOIN jsonb_array_elements(p_items) WITH ORDINALITY x ON x.ordinality = a.ord
    ), child AS (
      INSERT INTO agents (tree_id, parent_id, name, depth, state, system_prompt, model, profile,
                          cwd, budget, context_mode, context_parent_event, policy, caps)
      SELECT v_tree, p_parent, it->>'name', v_parent.depth + 1,
             CASE WHEN it->>'prompt' IS NULL THEN 'idle' ELSE 'running' END,
             it->>'system_prompt', coalesce(it->>'model', v_parent.model), it->>'profile',
             coalesce(it->>'cwd', v_parent.cwd), it->'budget', it->>'context',
             CASE WHEN it->>'context' = 'inherit'
                  THEN coalesce((it->>'cutoff')::bigint, v_cutoff) END,
             -- Narrowed, never widened: the parent's policies, then the child's own (its profile's).
             v_parent.policy || (it->'policy'),
             -- What the child may do, computed from its parent's (src/agents/capabilities.ts).
             it->'caps'
        FROM plan ORDER BY ord
      RETURNING *
    ), made AS (
      -- Names are unique among the accepted items (the twins check), so a child finds its item.
      SELECT plan.ord, plan.it, plan.children, plan.living, child.id, child.name,
             to_jsonb(child) AS row
        FROM plan JOIN child ON child.name = plan.it->>'name'
    ), forked AS (
      INSERT INTO events (agent_id, tree_id, kind, content, data)
      SELECT p_parent, v_tree, 'fork', 'forked ' || made.name || ' ' || left(made.id::text, 8),
             jsonb_build_object('agent_id', made.id, 'name', made.name)
        FROM made ORDER BY made.ord
    ), task AS (
      INSERT INTO events (agent_id, tree_id, kind, content)
      SELECT made.id, v_tree, 'user', made.it->>'prompt'
        FROM made WHERE made.it->>'prompt' IS NOT NULL ORDER BY made.ord
    ), wake AS (
      SELECT made.ord, pg_notify(p_channel, made.id::text)
        FROM made WHERE made.it->>'prompt' IS NOT NULL
    ), counted AS (
      UPDATE agents SET tool_calls = tool_calls + k.n, last_activity_at = now(),
                        lease_epoch = coalesce(p_epoch, lease_epoch)
        FROM (SELECT count(*)::int AS n FROM made WHERE made.it->>'key' IS NOT NULL) k
       WHERE id = p_parent AND k.n > 0
      RETURNING agents.id
    ), result AS (
      -- The same text as JSON.stringify({agent_id, name}).
      INSERT INTO events (agent_id, tree_id, kind, content, data, key, epoch)
      SELECT p_parent, v_tree, 'tool_result',
             '{"agent_id":' || to_json(made.id::text)::text || ',"name":' || to_json(made.name)::text || '}',
             made.it->'data', made.it->>'key', p_epoch
        FROM made WHERE made.it->>'key' IS NOT NULL ORDER BY made.ord
      RETURNING key, id, content
    )
    SELECT made.ord, false, true, v_parent.name, v_parent.state, v_parent.depth,
           v_parent.lease_owner, made.children, made.living, 0, made.row,
           (SELECT count(*)::int FROM wake WHERE wake.ord = made.ord), result.id, result.content
      FROM made LEFT JOIN result ON result.key = made.it->>'key'
     ORDER BY made.ord;
END $$;
--> statement-breakpoint
-- warren_feed_sync (0019) is SECURITY DEFINER: it runs ALTER TABLE … ENABLE/DISABLE TRIGGER,
-- which needs the tables' owner, for a role that may only read and write them. It was created
-- with `search_path FROM CURRENT` ("$user", public: pg_temp searched first for tables) and
-- EXECUTE left to PUBLIC, so a role with nothing but LOGIN could make a temp table named
-- feed_watchers with a trigger, call it, and run its trigger as the owner (a superuser became
-- one). Now its search_path is pinned with pg_temp last, every object it names is qualified by
-- warren's schema, and only the owner (and the roles it grants, docs/security.md) may
-- execute it.
DO $do$
DECLARE
  s text := current_schema();
BEGIN
  EXECUTE format($f$
CREATE OR REPLACE FUNCTION %1$I."warren_feed_sync"() RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, %1$I, pg_temp
  SET lock_timeout = '200ms' AS $$
DECLARE
  v_want boolean;
  v_on boolean;
BEGIN
  LOCK TABLE %1$I.feed_watchers IN SHARE ROW EXCLUSIVE MODE;
  DELETE FROM %1$I.feed_watchers WHERE expires_at < pg_catalog.now() - interval '10 minutes';
  v_want := EXISTS (SELECT 1 FROM %1$I.feed_watchers WHERE expires_at > pg_catalog.now());
  SELECT tgenabled <> 'D' INTO v_on FROM pg_catalog.pg_trigger
   WHERE tgrelid = %2$L::pg_catalog.regclass AND tgname = 'events_feed_insert';
  IF v_want IS NOT DISTINCT FROM v_on THEN
    RETURN v_want;
  END IF;
  IF v_want THEN
    ALTER TABLE %1$I.agents ENABLE TRIGGER agents_feed_insert, ENABLE TRIGGER agents_feed_update;
    ALTER TABLE %1$I.events ENABLE TRIGGER events_feed_insert;
    ALTER TABLE %1$I.mail ENABLE TRIGGER mail_feed_input;
  ELSE
    BEGIN
      ALTER TABLE %1$I.agents DISABLE TRIGGER agents_feed_insert, DISABLE TRIGGER agents_feed_update;
      ALTER TABLE %1$I.events DISABLE TRIGGER events_feed_insert;
      ALTER TABLE %1$I.mail DISABLE TRIGGER mail_feed_input;
    EXCEPTION WHEN lock_not_available THEN
      -- A busy table: the hints stay on until a later sync (the next feed to open or close).
      RETURN true;
    END;
  END IF;
  RETURN v_want;
END $$$f$, s, format('%I.events', s));
END $do$;
--> statement-breakpoint
-- No warren function is executable by PUBLIC (audit of 0000-0021: warren_feed_sync is the only
-- SECURITY DEFINER one; the others run with their caller's rights, and trigger functions cannot
-- be called directly). The owner keeps EXECUTE. A role that may already write the agents table
-- is one of warren's (a runtime role set up as docs/security.md says): it is granted
-- EXECUTE here, so an upgrade does not lock it out; roles made later are granted it by hand.
-- test/security/db-roles.test.ts checks every function in the schema.
DO $do$
DECLARE
  f regprocedure;
  r name;
BEGIN
  FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
            WHERE p.pronamespace = pg_catalog.current_schema()::regnamespace
              AND p.proname LIKE 'warren\_%'
  LOOP
    EXECUTE pg_catalog.format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
    FOR r IN SELECT DISTINCT g.grantee::name FROM information_schema.role_table_grants g
              WHERE g.table_schema = pg_catalog.current_schema() AND g.table_name = 'agents'
                AND g.privilege_type = 'INSERT' AND g.grantee <> 'PUBLIC'
                AND g.grantee::name <> CURRENT_USER
    LOOP
      EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %I', f, r);
    END LOOP;
  END LOOP;
END $do$;
