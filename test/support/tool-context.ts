// A tool context for calling agent tools (fork, send, wait, kill) directly against a test
// database, as the runtime would for one agent's turn.
import type { AgentRow } from "../../src/agents/agents.sql.js";
import { childCapabilities } from "../../src/agents/capabilities.js";
import { loadConfig } from "../../src/config/config.js";
import { DEFAULT_LIMITS } from "../../src/agents/limits.js";
import { getAgent } from "../../src/agents/refs.js";
import type { Bus } from "../../src/bus/bus.js";
import type { Db } from "../../src/db/client.js";
import type { AgentToolContext } from "../../src/tools/agent-context.js";

export async function toolContext(
  db: Db,
  bus: Bus,
  agentId: string,
  extra: Partial<AgentToolContext> = {},
): Promise<AgentToolContext> {
  const agent = (await getAgent(db, agentId)) as AgentRow;
  return {
    cwd: process.cwd(),
    signal: new AbortController().signal,
    db,
    bus,
    agent,
    limits: DEFAULT_LIMITS,
    profiles: {},
    fileAccess: "cwd",
    // As the runtime computes it, from a config without a file: no budget for children.
    forkCapabilities: async (request) =>
      childCapabilities(
        { ...loadConfig({ WARREN_CONFIG: "/nonexistent/warren.json" }), budget: {} },
        agent,
        request,
      ),
    assistantEventId: 0,
    toolCallId: `call_${Math.random().toString(36).slice(2)}`,
    setWaiting: async () => {},
    ...extra,
  };
}
