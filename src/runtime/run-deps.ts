// What a turn and the tool calls of its responses run with: the contracts turn.ts, resume.ts,
// tool-calls.ts and approval-gate.ts share, below all four so their imports run one way
// (turn → resume → tool-calls → approval-gate → here).
import type { AgentRow } from "../agents/agents.sql.js";
import type { Fence } from "../agents/errors.js";
import type { Bus } from "../bus/bus.js";
import type { Config } from "../config/config.js";
import type { Db } from "../db/client.js";
import type { WarningSink } from "../db/warning.js";
import type { Model } from "../llm/model.js";
import type { FanInEntry } from "../mail/wait.js";
import type { AnyTool } from "../tools/registry.js";

export interface TurnDeps {
  db: Db;
  bus: Bus;
  model: Model;
  config: Config;
  /** Warnings for people (an outage while a call is retried). */
  onWarning?: WarningSink;
  /** The lease of the worker running the turn: every write carries its epoch (errors.ts Fence). */
  fence?: Fence;
  /** A write was refused for a stale epoch: stop everything the turn does (set by runAgent). */
  onLeaseLost?: () => void;
  onWaitProgress?: (agentId: string, entries: FanInEntry[]) => void;
  /** The scheduler slot of this turn, given back while it blocks in `wait` (absent: none). */
  slot?: Slot;
}

/** A turn's place in its scheduler's concurrency. */
export interface Slot {
  /** The turn blocks (in `wait`): others may run in its place. */
  release(): void;
  /** The turn works again: resolves once it has a slot (or its signal aborts). */
  reacquire(signal: AbortSignal): Promise<void>;
}

export interface ToolRunDeps {
  db: Db;
  bus: Bus;
  agent: AgentRow;
  tools: AnyTool[];
  config: Config;
  assistantEventId: number;
  signal: AbortSignal;
  onWaitProgress?: (agentId: string, entries: FanInEntry[]) => void;
  /** The worker's lease: every result and effect carries its epoch (absent: not leased). */
  fence?: Fence;
  /** A write was refused for a stale epoch: the turn's other calls stop at once. */
  onLeaseLost?: () => void;
  onWarning?: WarningSink;
  /** The turn's scheduler slot, given back while a `wait` blocks. */
  slot?: Slot;
}

/**
 * What the tool calls of assistant event `assistantEventId` run with, from the turn's deps. One
 * literal, not a spread: a spread object here got a hidden class of its own per agent (~300 bytes
 * each, held by every waiting turn).
 */
export function toolRunDeps(
  deps: TurnDeps,
  agent: AgentRow,
  assistantEventId: number,
  signal: AbortSignal,
  tools: AnyTool[],
): ToolRunDeps {
  return {
    tools,
    db: deps.db,
    bus: deps.bus,
    agent,
    config: deps.config,
    assistantEventId,
    signal,
    onWaitProgress: deps.onWaitProgress,
    fence: deps.fence,
    onLeaseLost: deps.onLeaseLost,
    onWarning: deps.onWarning,
    slot: deps.slot,
  };
}
