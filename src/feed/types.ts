// The live feed of one tree, as its subscribers see it: typed updates built from NOTIFY hints on
// a single per-tree channel (hints carry ids; the feed reads the rows). Below the UI: a TUI, a
// second TUI, a test and a benchmark all use the same feed.
import type { AgentRow } from "../agents/agents.sql.js";
import type { EventRow } from "../agents/events.sql.js";
import type { Warning } from "../db/warning.js";

/** The partial answer of a model response still streaming (replaced by its `assistant` event). */
export interface StreamSnapshot {
  agentId: string;
  /** Assistant text so far. */
  text: string;
  /** Reasoning ("thinking") text so far, when the server sends any. */
  reasoning: string;
  /** False once the response has ended (its `assistant` event exists or the call failed). */
  live: boolean;
}

export type FeedUpdate =
  /** An agent of the tree was created or changed (state, counters, activity, wait_status, model, reaped_at, …). */
  | { type: "agent"; agent: AgentRow }
  /** A new event of an agent of the tree. */
  | { type: "event"; event: EventRow }
  /** The stream of a watched agent moved on (see Feed.watchStreams); about one per model delta. */
  | { type: "stream"; stream: StreamSnapshot }
  /** Queued person input of an agent changed (queued or delivered): re-read pendingInputs. */
  | { type: "input"; agentId: string }
  /** Hints may have been lost (the listener reconnected): reload whatever you show. */
  | { type: "resync" }
  /** The database connection is in trouble (an outage) or well again (outage-over). */
  | { type: "connection"; warning: Extract<Warning, { kind: "outage" | "outage-over" }> };

export interface Feed {
  readonly treeId: string;
  /**
   * Receives updates in batches, in the order they happened; returns an unsubscribe.
   * Subscribing never replays the past: read the current rows after subscribing.
   */
  subscribe(listener: (updates: FeedUpdate[]) => void): () => void;
  /** Agents whose stream text is fetched and delivered (others only change their `activity`). */
  watchStreams(agentIds: readonly string[]): void;
  close(): Promise<void>;
}

/**
 * The activity of an agent queued for a slot of a capped model server (runtime/model-cap.ts):
 * views show it as `queued`.
 */
export const QUEUED_ACTIVITY = "queued: model server at capacity";

/** Whether an agent is queued for a model slot, by its row. */
export function isQueued(agent: Pick<AgentRow, "state" | "activity">): boolean {
  return agent.state === "running" && agent.activity === QUEUED_ACTIVITY;
}
