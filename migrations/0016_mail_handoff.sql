-- A wait for the oldest mail that finds none registers here before it blocks (issue 15: wake);
-- a send to its agent then hands the mail over in the send's own statement: it consumes the mail,
-- records the wait's result under the wait's key (events_key_idx keeps one result per call, so a
-- wait that took other mail meanwhile, or timed out, makes the handoff do nothing) and NOTIFYs
-- the result, and the waiter returns without another round trip (src/mail/handoff.ts).
CREATE TABLE "mail_waits" (
	"agent_id" uuid NOT NULL,
	"tree_id" uuid NOT NULL,
	"key" text NOT NULL,
	"kind" text NOT NULL,
	"data" jsonb NOT NULL,
	"lease_owner" text,
	"epoch" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "mail_waits_agent_id_key_pk" PRIMARY KEY("agent_id","key")
);
