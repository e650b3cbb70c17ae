ALTER TABLE "agents" ADD COLUMN "activity" text;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "wait_status" jsonb;