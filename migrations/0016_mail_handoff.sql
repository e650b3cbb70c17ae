-- A wait for the oldest mail that finds none registers here before it blocks (issue 15: wake);
-- a send to its agent then hands the mail over in the send's own statement: it consumes the mail,
-- records the wait's result under the wait's key (events_key_idx keeps one result per call, so a
-- wait that took other mail meanwhile, or timed out, makes the handoff do nothing) and NOTIFYs
-- the result, and the waiter returns without another round trip (src/mail/handoff.ts). One row
-- per agent, kept: registering sets `key` and leaving clears it, updates no index covers (HOT),
-- so a send's lookup does not step over a dead index entry per past wait.
CREATE TABLE "mail_waits" (
	"agent_id" uuid PRIMARY KEY NOT NULL,
	"tree_id" uuid NOT NULL,
	"key" text,
	"kind" text NOT NULL,
	"data" jsonb NOT NULL,
	"lease_owner" text,
	"epoch" bigint,
	"registered_at" timestamp with time zone DEFAULT now() NOT NULL
);
