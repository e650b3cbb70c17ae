-- Issue 29: each MCP server's tool list, fetched in the background at process start and read by
-- every process's turns, so no model request waits for a server to start and every process
-- offers the same, stably ordered list (src/mcp/catalog.ts). Keyed by the server's name and a
-- hash of its configuration: a changed command, URL or environment is a new row, fetched anew.
CREATE TABLE "mcp_tools" (
  "server" text NOT NULL,
  "config_hash" text NOT NULL,
  "tools" jsonb,
  "error" text,
  "fetched_at" timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT "mcp_tools_pkey" PRIMARY KEY ("server", "config_hash")
);
