-- Results a program can read (issue 42). A fork's `output_schema` travels in the child's caps
-- (the fork batch's one statement stores them, 0024) and is readable as its own column; a mail
-- that is a child's final answer (its turn's text mailed for it, or `send {final: true}`) says so.
ALTER TABLE "agents" ADD COLUMN "output_schema" jsonb GENERATED ALWAYS AS (caps -> 'output_schema') STORED;
--> statement-breakpoint
ALTER TABLE "mail" ADD COLUMN "final" boolean DEFAULT false NOT NULL;
