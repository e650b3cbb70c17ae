CREATE TABLE "agents" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tree_id" uuid NOT NULL,
	"parent_id" uuid,
	"name" text NOT NULL,
	"state" text DEFAULT 'idle' NOT NULL,
	"depth" integer DEFAULT 0 NOT NULL,
	"profile" text,
	"model" text,
	"system_prompt" text,
	"cwd" text,
	"context_mode" text DEFAULT 'fresh' NOT NULL,
	"context_parent_event" bigint,
	"budget" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"tool_calls" integer DEFAULT 0 NOT NULL,
	"input_tokens" bigint DEFAULT 0 NOT NULL,
	"output_tokens" bigint DEFAULT 0 NOT NULL,
	"turns" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone,
	"reaped_at" timestamp with time zone,
	"last_activity_at" timestamp with time zone DEFAULT now() NOT NULL,
	"busy_since" timestamp with time zone,
	"lease_owner" text,
	"lease_expires_at" timestamp with time zone,
	"interrupt_requested_at" timestamp with time zone,
	CONSTRAINT "agents_state_check" CHECK ("agents"."state" in ('idle', 'running', 'waiting', 'dead'))
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"agent_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"content" text DEFAULT '' NOT NULL,
	"data" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mail" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"tree_id" uuid NOT NULL,
	"from_id" uuid,
	"to_id" uuid NOT NULL,
	"body" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"consumed_at" timestamp with time zone,
	"consumed_by_event" bigint
);
--> statement-breakpoint
CREATE INDEX "agents_tree_idx" ON "agents" USING btree ("tree_id","created_at");--> statement-breakpoint
CREATE INDEX "agents_parent_idx" ON "agents" USING btree ("parent_id");--> statement-breakpoint
CREATE INDEX "agents_work_idx" ON "agents" USING btree ("lease_expires_at") WHERE state in ('running', 'waiting');--> statement-breakpoint
CREATE INDEX "events_agent_idx" ON "events" USING btree ("agent_id","id");--> statement-breakpoint
CREATE INDEX "mail_inbox_idx" ON "mail" USING btree ("to_id","id") WHERE consumed_at is null;--> statement-breakpoint
CREATE INDEX "mail_inbox_from_idx" ON "mail" USING btree ("to_id","from_id","id") WHERE consumed_at is null;