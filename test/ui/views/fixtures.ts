// Rows for view tests: agents and events as the database returns them, with defaults.
import type { AgentRow } from "../../../src/agents/agents.sql.js";
import type { EventRow } from "../../../src/agents/events.sql.js";

export const NOW = Date.parse("2026-01-01T12:00:00Z");

let seq = 0;

/** A uuid-shaped id whose first 8 characters are `prefix` (padded). */
export function idOf(prefix: string): string {
  const head = prefix.padEnd(8, "0").slice(0, 8);
  const tail = (++seq).toString(16).padStart(12, "0");
  return `${head}-0000-4000-8000-${tail}`;
}

let forkSeq = 0;

export function agent(fields: Partial<AgentRow> & { name: string }): AgentRow {
  const id = fields.id ?? idOf(fields.name.replace(/[^0-9a-f]/g, "") || "a");
  return {
    id,
    tree_id: fields.tree_id ?? id,
    parent_id: null,
    state: "idle",
    depth: 0,
    profile: null,
    model: "gpt-test",
    system_prompt: null,
    cwd: null,
    context_mode: "fresh",
    context_parent_event: null,
    budget: {},
    failure: null,
    trace_context: null,
    output_schema: null,
    tool_calls: 0,
    input_tokens: 0,
    output_tokens: 0,
    cached_tokens: 0,
    reasoning_tokens: 0,
    turns: 0,
    created_at: new Date(NOW - 600_000),
    ended_at: null,
    reaped_at: null,
    last_activity_at: new Date(NOW - 5_000),
    busy_since: null,
    lease_owner: null,
    lease_expires_at: null,
    lease_epoch: 0,
    policy: [],
    caps: null,
    worktree: null,
    repository: null,
    approve: null,
    turn_counted_event: null,
    interrupt_requested_at: null,
    activity: null,
    wait_status: null,
    // In the order made, as the database draws it (migration 0033).
    fork_seq: ++forkSeq,
    ...fields,
  };
}

let eventSeq = 1000;

export function event(
  kind: EventRow["kind"],
  content: string,
  data: Record<string, unknown> | null = null,
  fields: Partial<EventRow> = {},
): EventRow {
  return {
    id: ++eventSeq,
    agent_id: "00000000-0000-4000-8000-000000000000",
    tree_id: "00000000-0000-4000-8000-000000000000",
    kind,
    content,
    data,
    created_at: new Date(NOW),
    key: null,
    rewound_at: null,
    epoch: null,
    ...fields,
  };
}
