// The turn loop's one hook into checkpoints (issue 43): before the first call of a turn that may
// change files, the agent's working directory is checkpointed (src/agents/checkpoints.ts), once
// per turn. A turn that calls only tools that change nothing takes none, and an idle agent none.
import type { AgentRow } from "../agents/agents.sql.js";
import { takeCheckpoint } from "../agents/checkpoints.js";
import { TooManyFiles } from "../agents/checkpoint-store.js";
import { capabilitiesOf } from "../agents/capabilities.js";
import { DEFAULT_CHECKPOINTS } from "../config/config.js";
import { isTransient } from "../db/retry.js";
import { notice } from "../db/warning.js";
import { isLeaseLost } from "../agents/errors.js";
import { agentDir } from "../agents/checkpoints.js";
import type { TurnDeps } from "./run-deps.js";

/** The tools that may change files in the working directory (an MCP server's may too). */
const WRITING_TOOLS = ["write_file", "edit_file", "bash"];

/** Whether a turn of `agent` is offered a tool that may change files. */
export function mayChangeFiles(deps: Pick<TurnDeps, "config">, agent: AgentRow): boolean {
  const tools = capabilitiesOf(deps.config, agent).tools;
  if (tools === null) return true;
  const mcp = Object.keys(deps.config.mcpServers).length > 0;
  return tools.some(
    (t) => WRITING_TOOLS.includes(t) || t.includes("*") || (mcp && t.startsWith("mcp")),
  );
}

/** Directories outside git too big to copy, and when this process found so. */
const tooBig = new Map<string, number>();
const TOO_BIG_RECHECK_MS = 10 * 60_000;

/**
 * Takes the checkpoint before the turn `startEvent` started, when the turn may change files. A
 * failure to take it does not stop the turn: people are told in one line. A working directory in
 * a git repository other than the tree's (where warren's git does not run) gets none.
 */
export async function checkpointBeforeTurn(
  deps: Pick<TurnDeps, "db" | "config" | "fence" | "onWarning">,
  agent: AgentRow,
  startEvent: number,
): Promise<void> {
  const settings = deps.config.checkpoints ?? DEFAULT_CHECKPOINTS;
  if (!settings.enabled || !mayChangeFiles(deps, agent)) return;
  const dir = agentDir(agent);
  const known = tooBig.get(dir);
  if (known !== undefined && Date.now() - known < TOO_BIG_RECHECK_MS) return;
  try {
    await takeCheckpoint(
      deps.db,
      agent,
      startEvent,
      { maxFileBytes: settings.maxFileBytes },
      deps.fence,
    );
  } catch (err) {
    if (isLeaseLost(err) || isTransient(err)) throw err;
    if (err instanceof TooManyFiles) {
      // Said once per directory and process; not walked again for a while (every turn of every
      // agent there would pay the walk).
      if (known === undefined) deps.onWarning?.(notice(`${agent.name}: ${err.message}`));
      tooBig.set(dir, Date.now());
      return;
    }
    deps.onWarning?.(
      notice(`${agent.name}: no checkpoint before this turn: ${(err as Error).message}`),
    );
  }
}
