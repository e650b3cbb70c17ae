// Expected failures of agent and mail operations: a code from SPEC §3 plus a one-line message.
export const ERROR_CODES = [
  "INVALID_ARGS",
  "UNKNOWN_AGENT",
  "AGENT_DEAD",
  "NOT_ALLOWED",
  "LIMIT_EXCEEDED",
  "INTERNAL",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export class AgentError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "AgentError";
  }
}

export function isAgentError(err: unknown): err is AgentError {
  return err instanceof AgentError;
}

/**
 * A write fenced by a lease found another worker (or none) holding it: this worker stops the
 * turn without writing anything more (SPEC §3). Not an error of the agent: never a tool result.
 */
export class LeaseLost extends Error {
  constructor(readonly agentId: string) {
    super(`lease of agent ${agentId.slice(0, 8)} lost to another worker`);
    this.name = "LeaseLost";
  }
}

/**
 * A turn's fencing token: the worker that claimed the agent and the lease epoch of that claim.
 * Every write of the turn carries the epoch; the database refuses a stale one (SQLSTATE WL001).
 */
export interface Fence {
  owner: string;
  epoch: number;
}

/** The SQLSTATE the fencing triggers raise (migration 0006). */
export const FENCE_SQLSTATE = "WL001";

/** Is `err` a lost lease: ours (LeaseLost) or the database's refusal of a stale epoch? */
export function isLeaseLost(err: unknown): boolean {
  for (let current = err, depth = 0; current && depth < 5; depth++) {
    if (current instanceof LeaseLost) return true;
    if ((current as { code?: unknown }).code === FENCE_SQLSTATE) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
