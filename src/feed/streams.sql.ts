// The agent_streams table: per agent, the partial answer of the model response streaming now
// (coalesced writes from the turn loop), so a TUI in any process can show it live.
import { sql } from "drizzle-orm";
import { bigint, boolean, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { timestamptzNow } from "../db/columns.js";

export const agentStreams = pgTable("agent_streams", {
  agent_id: uuid("agent_id").primaryKey(),
  /** The agent's tree (filled from the agent by the agent_streams_tree_id trigger when not given). */
  tree_id: uuid("tree_id")
    .notNull()
    .default(sql`null`),
  text: text("text").notNull().default(""),
  reasoning: text("reasoning").notNull().default(""),
  /** False once the response has ended (its `assistant` event exists or the call failed). */
  live: boolean("live").notNull().default(true),
  updated_at: timestamptzNow("updated_at"),
  /**
   * Which model response the text belongs to: the id of the transaction that first wrote it
   * (pg_current_xact_id), so a later response always has a larger one. Hints carry it, and a
   * feed never lets an older response's text replace a newer one's (see stream-state.ts).
   */
  response: bigint("response", { mode: "number" })
    .notNull()
    .default(sql`0`),
});

export type AgentStreamRow = typeof agentStreams.$inferSelect;
