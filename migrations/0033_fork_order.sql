-- One order of children everywhere (issue 41 §4): the forks of one batch are made by one statement
-- (warren_fork_batch), so their created_at (now(), the transaction's time) is equal and their ids
-- are random: readers that sorted by (created_at, id) listed siblings in a different order on each
-- run. fork_seq is drawn from a sequence as each row is inserted — in the batch's order, which is
-- the order of the model's calls — so (fork_seq) is fork order. Existing rows are numbered in an
-- unspecified order when the column is added; only forks made after it are ordered by it.
ALTER TABLE "agents" ADD COLUMN "fork_seq" bigserial NOT NULL;
--> statement-breakpoint
-- A runtime role that may write the agents table (docs/security.md: USAGE on its sequences, granted
-- when it was set up) needs the new sequence too, or its next fork fails.
DO $do$
DECLARE
  r name;
BEGIN
  FOR r IN SELECT DISTINCT g.grantee::name FROM information_schema.role_table_grants g
            WHERE g.table_schema = pg_catalog.current_schema() AND g.table_name = 'agents'
              AND g.privilege_type = 'INSERT' AND g.grantee <> 'PUBLIC'
              AND g.grantee::name <> CURRENT_USER
  LOOP
    EXECUTE pg_catalog.format('GRANT USAGE ON SEQUENCE agents_fork_seq_seq TO %I', r);
  END LOOP;
END $do$;
