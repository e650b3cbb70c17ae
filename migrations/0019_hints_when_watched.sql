-- The feed's hint triggers are enabled only while a feed is open (issue 15). They were always
-- enabled and looked in feed_watchers on every row: unwatched trees sent no NOTIFY, but every
-- write still ran them, and a trigger that does nothing cost as much as one that looks (about
-- 0.03 ms a row: a send handing mail to a wait fires two, a fan-in child about a dozen). Now
-- nothing fires while no feed is open anywhere (headless runs, workers, benchmarks); with one
-- open they fire as before and still NOTIFY only watched trees.
--
-- By construction, not by care: warren_feed_sync enables or disables them to match
-- feed_watchers, under feed_watchers' own lock (feeds opening, refreshing and closing decide one
-- at a time), and a feed registers and syncs in one transaction before its first read
-- (src/feed/watchers.ts). ALTER TABLE … ENABLE TRIGGER takes a SHARE ROW EXCLUSIVE lock on the
-- table: it waits for every transaction that is writing the table, and every write after it
-- takes its own lock after the change and so sees the trigger enabled. So a write that sent no
-- hint committed before the feed's first read, which sees it. The lock waits at most
-- lock_timeout (200 ms here, below deadlock_timeout, so a writer is never chosen as a deadlock
-- victim): the feed then retries (SQLSTATE 55P03 is transient), and a failed disable leaves the
-- triggers on, which only costs time. SECURITY DEFINER: the function runs as the tables' owner
-- (who ran this migration), so a role that may only read and write them can still open a feed.
CREATE FUNCTION "warren_feed_sync"() RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path FROM CURRENT
  SET lock_timeout = '200ms' AS $$
DECLARE
  v_want boolean;
  v_on boolean;
BEGIN
  LOCK TABLE feed_watchers IN SHARE ROW EXCLUSIVE MODE;
  DELETE FROM feed_watchers WHERE expires_at < now() - interval '10 minutes';
  v_want := EXISTS (SELECT 1 FROM feed_watchers WHERE expires_at > now());
  SELECT tgenabled <> 'D' INTO v_on FROM pg_trigger
   WHERE tgrelid = 'events'::regclass AND tgname = 'events_feed_insert';
  IF v_want IS NOT DISTINCT FROM v_on THEN
    RETURN v_want;
  END IF;
  IF v_want THEN
    ALTER TABLE agents ENABLE TRIGGER agents_feed_insert, ENABLE TRIGGER agents_feed_update;
    ALTER TABLE events ENABLE TRIGGER events_feed_insert;
    ALTER TABLE mail ENABLE TRIGGER mail_feed_input;
  ELSE
    BEGIN
      ALTER TABLE agents DISABLE TRIGGER agents_feed_insert, DISABLE TRIGGER agents_feed_update;
      ALTER TABLE events DISABLE TRIGGER events_feed_insert;
      ALTER TABLE mail DISABLE TRIGGER mail_feed_input;
    EXCEPTION WHEN lock_not_available THEN
      -- A busy table: the hints stay on until a later sync (the next feed to open or close).
      RETURN true;
    END;
  END IF;
  RETURN v_want;
END $$;
--> statement-breakpoint
-- A feed registers (or refreshes its row) and syncs in one statement: the lock first, so that
-- two feeds opening together queue instead of deadlocking on an upgrade from the insert's lock.
CREATE FUNCTION "warren_feed_watch"(p_id uuid, p_tree uuid, p_ttl_s double precision,
                                    p_streams uuid[]) RETURNS boolean
  LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  LOCK TABLE feed_watchers IN SHARE ROW EXCLUSIVE MODE;
  INSERT INTO feed_watchers (id, tree_id, expires_at, streams)
  VALUES (p_id, p_tree, now() + make_interval(secs => p_ttl_s), p_streams)
  ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, streams = excluded.streams;
  RETURN warren_feed_sync();
END $$;
--> statement-breakpoint
CREATE FUNCTION "warren_feed_unwatch"(p_id uuid) RETURNS boolean
  LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  LOCK TABLE feed_watchers IN SHARE ROW EXCLUSIVE MODE;
  DELETE FROM feed_watchers WHERE id = p_id;
  RETURN warren_feed_sync();
END $$;
--> statement-breakpoint
SELECT "warren_feed_sync"();
