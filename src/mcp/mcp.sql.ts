// The mcp_tools table (migration 0025): each MCP server's tool list, keyed by its name and a hash
// of its configuration, with when it was fetched (or why it could not be).
import { jsonb, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";

export const mcpTools = pgTable(
  "mcp_tools",
  {
    server: text("server").notNull(),
    config_hash: text("config_hash").notNull(),
    /** The server's tools as listed (name, description, inputSchema); null: never listed. */
    tools: jsonb("tools"),
    /** Why the last fetch failed (one line), if it did. */
    error: text("error"),
    fetched_at: timestamp("fetched_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: "mcp_tools_pkey", columns: [t.server, t.config_hash] })],
);
