-- A feed that crashed never closes: its registration expires, but the hint triggers stay on
-- (0019) until some feed opens, refreshes or closes, which with no TUI open may be never, and
-- every write of a headless run pays for them. Each worker thread's scheduler calls this now and
-- then (src/feed/watchers.ts, expireHints): a look at the triggers' state and the live
-- registrations, and the sync only when the triggers are on with none live. The sync decides
-- again under feed_watchers' lock, so a feed that registers meanwhile keeps them on.
CREATE FUNCTION "warren_feed_expire"() RETURNS boolean
  LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_trigger
              WHERE tgrelid = 'events'::regclass AND tgname = 'events_feed_insert'
                AND tgenabled <> 'D')
     AND NOT EXISTS (SELECT 1 FROM feed_watchers WHERE expires_at > now()) THEN
    RETURN warren_feed_sync();
  END IF;
  RETURN NULL;
END $$;
