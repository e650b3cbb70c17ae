// The agents table: one row per agent of every tree, with its state, counters, budget and lease.
import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  uuid,
} from "drizzle-orm/pg-core";
import { timestamptz, timestamptzNow } from "../db/columns.js";

import type { SandboxMode } from "../sandbox/settings.js";
import type { ApproveMode, Policy } from "../policy/policy.js";
import type { NetworkPolicy } from "../sandbox/network/rules.js";

/** How far the file tools reach: the agent's working directory only, or anywhere. */
export type FileAccess = "cwd" | "any";

export const AGENT_STATES = ["idle", "running", "waiting", "dead"] as const;
export type AgentState = (typeof AGENT_STATES)[number];

/** Per-agent budget; a missing field means "no limit". */
export interface Budget {
  turns?: number;
  tool_calls?: number;
  tokens?: number;
  wall_seconds?: number;
  /**
   * US dollars, priced by the config's `prices`. On a root, the whole tree's cost (every agent's,
   * reaped ones included); on any other agent, its own.
   */
  usd?: number;
}

/**
 * What a forked agent may do, as its fork computed it from its parent's (capabilities.ts). A
 * grandchild narrows from these, never from the config.
 */
export interface StoredCaps {
  /** Tool names offered, or null: every tool. */
  tools: string[] | null;
  file_access: FileAccess;
  sandbox: SandboxMode;
  /** The network (sandbox/network/rules.ts); absent on rows stored before it: the config's. */
  network?: NetworkPolicy;
  /**
   * Set by the `fork` tool (not the person's /fork): the child's task came from its parent, so
   * a turn that ends with text and no mail to the parent mails that text (runtime/final-answer.ts).
   */
  reports?: true;
  /** The fork's `output_schema` (stored as agents.output_schema, a column generated from this). */
  output_schema?: Record<string, unknown>;
}

/** Where an isolated child works: its worktree, its branch, the commit it started from, and the
 *  top level of the repository its parent worked in (where `merge` lands). */
export interface WorktreeInfo {
  path: string;
  branch: string;
  base: string;
  repo: string;
  /**
   * The common git directory it was made in, the tree's recorded repository: every git run in
   * the worktree or the parent's tree is checked against it, whatever a `.git` says by then.
   */
  common?: string;
  /** Set once `discard` (or reaping) removed the worktree and its branch. */
  removed?: boolean;
  /** What it changed against `base`, as last measured after its tools ran (the panel shows it). */
  changes?: { files: number; added: number; removed: number };
}

/** One awaited agent of a fan-in wait, as the status layer shows it. */
export interface WaitStatusEntry {
  agent_id: string;
  name: string;
  status: "received" | "dead" | "failed" | "idle" | "running";
}

export const agents = pgTable(
  "agents",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    tree_id: uuid("tree_id").notNull(),
    parent_id: uuid("parent_id"),
    name: text("name").notNull(),
    state: text("state").$type<AgentState>().notNull().default("idle"),
    depth: integer("depth").notNull().default(0),
    profile: text("profile"),
    model: text("model"),
    system_prompt: text("system_prompt"),
    cwd: text("cwd"),
    /** "inherit": the context starts with the parent's events before `context_parent_event`. */
    context_mode: text("context_mode").$type<"inherit" | "fresh">().notNull().default("fresh"),
    context_parent_event: bigint("context_parent_event", { mode: "number" }),
    budget: jsonb("budget").$type<Budget>().notNull().default({}),
    tool_calls: integer("tool_calls").notNull().default(0),
    input_tokens: bigint("input_tokens", { mode: "number" }).notNull().default(0),
    output_tokens: bigint("output_tokens", { mode: "number" }).notNull().default(0),
    /** Of input_tokens, those the server read from its prompt cache (`cached_tokens`). */
    cached_tokens: bigint("cached_tokens", { mode: "number" }).notNull().default(0),
    /** Of output_tokens, those spent on hidden reasoning (`reasoning_tokens`). */
    reasoning_tokens: bigint("reasoning_tokens", { mode: "number" }).notNull().default(0),
    turns: integer("turns").notNull().default(0),
    created_at: timestamptzNow("created_at"),
    ended_at: timestamptz("ended_at"),
    reaped_at: timestamptz("reaped_at"),
    last_activity_at: timestamptzNow("last_activity_at"),
    /** Set when the agent first starts work after being idle; wall-seconds budgets count from it. */
    busy_since: timestamptz("busy_since"),
    lease_owner: text("lease_owner"),
    lease_expires_at: timestamptz("lease_expires_at"),
    /**
     * The fencing token: raised by one on every claim. A turn stamps its writes with the epoch it
     * claimed, and the database refuses a stamp that is not the current one (the triggers of
     * migration 0006): a worker that lost its lease writes nothing, whatever path it takes.
     */
    lease_epoch: bigint("lease_epoch", { mode: "number" }).notNull().default(0),
    /** Tool policies that narrow the config's for this agent (its profiles', inherited by forks). */
    policy: jsonb("policy").$type<Policy[]>().notNull().default([]),
    /** A fork's capabilities (capabilities.ts); null on roots: theirs come from the config. */
    caps: jsonb("caps").$type<StoredCaps>(),
    /** An isolated child's git worktree (its cwd) and branch (src/agents/worktree.ts); else null. */
    worktree: jsonb("worktree").$type<WorktreeInfo>(),
    /**
     * On a root: the repository its working directory was in when the tree started (the common
     * git directory, a real path), the only one warren's git runs in for the tree; null outside
     * any (src/agents/repository.ts).
     */
    repository: text("repository"),
    /** On a root: how its tree answers tool calls the policy marks `ask` (`--approve`). */
    approve: text("approve").$type<ApproveMode>(),
    /** The event that started the last counted turn: a resumed turn is not counted twice. */
    turn_counted_event: bigint("turn_counted_event", { mode: "number" }),
    interrupt_requested_at: timestamptz("interrupt_requested_at"),
    /** What the agent is doing now, for people: "thinking", "bash: ls -la", "waiting for 3 agents". */
    activity: text("activity"),
    /** While the agent waits on several agents: the live per-agent fan-in state (status layer). */
    wait_status: jsonb("wait_status").$type<WaitStatusEntry[]>(),
    /**
     * Why the agent's last turn failed (its model requests failed for good: the `error` event's
     * text), until its next turn starts; an idle agent with one is shown and awaited as `failed`
     * (migration 0029 keeps it from the events).
     */
    failure: text("failure"),
    /**
     * Fork order (migration 0033): drawn from a sequence as the row is inserted, so the forks of
     * one batch, which share created_at, are numbered in the order of the model's calls.
     */
    fork_seq: bigserial("fork_seq", { mode: "number" }).notNull(),
    /**
     * The W3C traceparent of the `fork` call that made this agent, when telemetry was on: its
     * runs' spans descend from it in whichever process runs them (migration 0031). A root's is
     * the run that started its current turn (agents/root-trace.ts): a resumed run joins it.
     */
    trace_context: text("trace_context"),
    /**
     * The JSON Schema its mail to its parent must match (fork's `output_schema`, an agent file's
     * or profile's), generated from caps so that the fork's one statement stores it (0030).
     */
    output_schema: jsonb("output_schema")
      .$type<Record<string, unknown>>()
      .generatedAlwaysAs(sql`caps -> 'output_schema'`),
  },
  (t) => [
    index("agents_tree_idx").on(t.tree_id, t.created_at),
    index("agents_parent_idx").on(t.parent_id),
    index("agents_work_idx")
      .on(t.lease_expires_at)
      .where(sql`state in ('running', 'waiting')`),
    check("agents_state_check", sql`${t.state} in ('idle', 'running', 'waiting', 'dead')`),
  ],
);

export type AgentRow = typeof agents.$inferSelect;
