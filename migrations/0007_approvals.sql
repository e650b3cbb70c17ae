CREATE TABLE "approvals" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"tree_id" uuid NOT NULL,
	"agent_id" uuid NOT NULL,
	"call_key" text NOT NULL,
	"tool" text NOT NULL,
	"subject" text NOT NULL,
	"arguments" text NOT NULL,
	"pattern" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"scope" text,
	"reason" text,
	"answered_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"answered_at" timestamp with time zone,
	CONSTRAINT "approvals_status_check" CHECK ("approvals"."status" in ('pending', 'allowed', 'denied', 'cancelled'))
);
--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "policy" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "approve" text;--> statement-breakpoint
CREATE UNIQUE INDEX "approvals_call_idx" ON "approvals" USING btree ("agent_id","call_key");--> statement-breakpoint
CREATE INDEX "approvals_pending_idx" ON "approvals" USING btree ("tree_id","id") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "approvals_tree_rules_idx" ON "approvals" USING btree ("tree_id","tool") WHERE status = 'allowed' and scope = 'tree';