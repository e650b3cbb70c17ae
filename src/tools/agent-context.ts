// What the agent tools (fork, send, wait, kill) need beyond a working directory: the database,
// the bus, who is calling, and the limits and profiles in force.
import type { AgentRow } from "../agents/agents.sql.js";
import { isAgentError, isLeaseLost, type Fence } from "../agents/errors.js";
import type { Limits } from "../agents/limits.js";
import type { Bus } from "../bus/bus.js";
import type { FileAccess } from "../agents/agents.sql.js";
import type { Profile } from "../agents/profile.js";
import type { ChildCapabilities, ForkRequest } from "../agents/capabilities.js";
import type { Db } from "../db/client.js";
import type { WarningSink } from "../db/warning.js";
import type { FanInEntry } from "../mail/wait.js";
import { fail, internalFailure, type BaseToolContext, type ToolOutcome } from "./tool.js";

export interface AgentToolContext extends BaseToolContext {
  db: Db;
  bus: Bus;
  agent: AgentRow;
  limits: Limits;
  profiles: Record<string, Profile>;
  /** How far the file tools reach (paths.ts): the config's, or the agent's profile's. */
  fileAccess: FileAccess;
  /**
   * What a child forked now may do: the caller's capabilities narrowed by what the fork asks
   * (agents/capabilities.ts childCapabilities). Throws LIMIT_EXCEEDED when no budget is left.
   */
  forkCapabilities(request: ForkRequest): Promise<ChildCapabilities>;
  /** The assistant event whose response made this call (the `inherit` cutoff for fork). */
  assistantEventId: number;
  toolCallId: string;
  /**
   * The W3C traceparent of this call's `execute_tool` span, when telemetry is on: a fork stores
   * it on its child's row (one trace across processes and hosts).
   */
  traceparent?: string;
  /**
   * The lease of the worker running this turn: fenced effects (effects.ts) commit only while it
   * still holds the caller's lease, and every event they write carries its epoch. Absent outside
   * a leased turn (the person's commands).
   */
  fence?: Fence;
  /** One-line notices for people (e.g. the database is being retried). */
  onWarning?: WarningSink;
  /**
   * The agent's state is shown as `waiting` while a wait blocks; `setWaiting(false)` first takes
   * back the scheduler slot given up through `onBlocked`.
   */
  setWaiting(waiting: boolean): Promise<void>;
  /** A wait found nothing yet and sleeps: its scheduler slot may run another agent meanwhile. */
  onBlocked?: () => void;
  /**
   * Fan-in progress, for anyone watching (the status layer). Given, the fan-in's looks store it
   * as the agent's wait_status themselves (`stored`); the rest is this callback's to write.
   */
  onWaitProgress?: (entries: FanInEntry[], stored: boolean) => void;
}

/** Turns an AgentError into its error outcome; anything else is INTERNAL. */
export function failure(err: unknown): ToolOutcome {
  // Not the tool's failure: the turn stops without writing anything more.
  if (isLeaseLost(err)) throw err;
  if (isAgentError(err)) return fail(err.code, err.message);
  return internalFailure(err);
}
