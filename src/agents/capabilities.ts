// What an agent may do, and the one function that computes a child's from its parent's (SPEC §3,
// "A fork never widens"): the `fork` tool and the TUI's `/fork` both go through childCapabilities,
// and the result is stored on the child's row (agents.caps, budget, policy), so a grandchild
// narrows from its parent's effective capabilities, never from the config or a profile alone.
import { matchesPattern } from "../policy/patterns.js";
import type { Policy } from "../policy/policy.js";
import { agentCost, type Prices } from "./cost.js";
import type { AgentRow, Budget, FileAccess, StoredCaps } from "./agents.sql.js";
import { AgentError } from "./errors.js";
import type { Profile } from "./profile.js";
import { narrowNetwork, type NetworkPolicy } from "../sandbox/network/rules.js";
import type { SandboxMode } from "../sandbox/settings.js";

/**
 * The part of the config (config/config.ts) a capability is computed from; the config itself is
 * one, and is what callers pass. Named here so that the agents stay below the config.
 */
export interface CapabilityDefaults {
  profiles: Record<string, Profile>;
  fileAccess: FileAccess;
  sandbox: { mode: SandboxMode; network: NetworkPolicy };
  budget: Budget;
  prices: Prices;
  model: { name?: string };
}

/** Offered to every child whatever its parent's or profile's tools, so that it can report. */
export const ALWAYS_OFFERED = ["send", "wait"] as const;

export interface Capabilities {
  /** The tool names offered, or null: every tool. */
  tools: string[] | null;
  fileAccess: FileAccess;
  sandbox: SandboxMode;
  /** The network gate: true, false, or rule sets that must all let a host through. */
  network: NetworkPolicy;
  /** Policies that narrow the config's, strictest answer wins (policy.ts `decide`). */
  policy: Policy[];
  budget: Budget;
}

/** What a fork asks for beyond its parent's: a profile, a budget (agent files to come). */
export interface ForkRequest {
  profile?: Profile;
  /** The `fork` tool's `budget` argument; fields it leaves out come from the profile, the config. */
  budget?: Budget;
}

/** What a fork stores: the child's row fields that carry its capabilities. */
export interface ChildCapabilities {
  caps: StoredCaps;
  budget: Budget;
  /** Appended to the parent's chain by the fork's statement (under the parent's lock). */
  policy: Policy[];
}

const SANDBOX_RANK: Record<SandboxMode, number> = { off: 0, auto: 1, on: 2 };

/**
 * An agent's effective capabilities: its stored caps (a fork's), else the config and its profile
 * (a root, or an agent made before caps were stored).
 */
export function capabilitiesOf(config: CapabilityDefaults, agent: AgentRow): Capabilities {
  const profile = agent.profile ? config.profiles[agent.profile] : undefined;
  const caps = agent.caps;
  return {
    tools: caps ? caps.tools : (profile?.tools ?? null),
    fileAccess: caps ? caps.file_access : (profile?.file_access ?? config.fileAccess),
    sandbox: caps ? caps.sandbox : stricterSandbox(config.sandbox.mode, profile?.sandbox),
    network: caps?.network ?? narrowNetwork(config.sandbox.network, profile?.sandbox_network),
    policy: agent.policy,
    budget: agent.budget,
  };
}

/**
 * A child's capabilities: its parent's, narrowed by what the fork asks. Every dimension takes the
 * stricter of the two; a profile can only narrow. Throws LIMIT_EXCEEDED when the parent has no
 * budget left to give.
 */
export function childCapabilities(
  config: CapabilityDefaults,
  parent: AgentRow,
  request: ForkRequest,
  now = Date.now(),
): ChildCapabilities {
  const from = capabilitiesOf(config, parent);
  const { profile } = request;
  return {
    caps: {
      tools: childTools(from.tools, profile?.tools),
      // Confined stays confined whatever the profile says.
      file_access: from.fileAccess === "cwd" ? "cwd" : (profile?.file_access ?? from.fileAccess),
      sandbox: stricterSandbox(from.sandbox, profile?.sandbox),
      network: narrowNetwork(from.network, profile?.sandbox_network),
    },
    budget: childBudget(config, parent, request, now),
    policy: profile?.policy ? [profile.policy] : [],
  };
}

/**
 * The parent's tools that the profile also lists (all of them without a list), plus send/wait.
 * Names may be `*` patterns (`mcp__github__*`): an entry of either list is kept when the other
 * list covers it (a pattern covers another when it matches its text), so the result never names
 * a tool both did not.
 */
function childTools(parent: string[] | null, asked: string[] | undefined): string[] | null {
  if (parent === null && asked === undefined) return null;
  const covers = (list: string[], name: string) =>
    list.some((p) => p === name || (p.includes("*") && matchesPattern(p, name)));
  const kept =
    parent === null
      ? asked!
      : asked === undefined
        ? parent
        : [...parent.filter((t) => covers(asked, t)), ...asked.filter((t) => covers(parent, t))];
  return [...new Set([...kept, ...ALWAYS_OFFERED])].sort();
}

function stricterSandbox(a: SandboxMode, b: SandboxMode | undefined): SandboxMode {
  return b !== undefined && SANDBOX_RANK[b] > SANDBOX_RANK[a] ? b : a;
}

const BUDGET_FIELDS = ["turns", "tool_calls", "tokens", "wall_seconds", "usd"] as const;

/**
 * The fork's budget (its `budget`, else the profile's, else the config's, field by field), each
 * field capped by what the parent has left of its own. A parent with nothing left of a field
 * cannot fork: its child would have nothing to run on.
 */
function childBudget(
  config: CapabilityDefaults,
  parent: AgentRow,
  request: ForkRequest,
  now: number,
): Budget {
  const asked: Budget = { ...config.budget, ...request.profile?.budget, ...request.budget };
  const left = remaining(config, parent, now);
  const out: Budget = {};
  for (const field of BUDGET_FIELDS) {
    const cap = left[field];
    const want = asked[field];
    if (cap !== undefined && cap <= 0) {
      throw new AgentError(
        "LIMIT_EXCEEDED",
        `your ${field.replace("_", " ")} budget is used up: there is none left to give a child`,
      );
    }
    const value = want === undefined ? cap : cap === undefined ? want : Math.min(want, cap);
    if (value !== undefined) out[field] = value;
  }
  return out;
}

/** What the parent has left of each field its budget limits (undefined: no limit). */
function remaining(config: CapabilityDefaults, parent: AgentRow, now: number): Budget {
  const b = parent.budget;
  const left: Budget = {};
  if (b.turns !== undefined) left.turns = b.turns - parent.turns;
  if (b.tool_calls !== undefined) left.tool_calls = b.tool_calls - parent.tool_calls;
  if (b.tokens !== undefined) {
    left.tokens = b.tokens - (Number(parent.input_tokens) + Number(parent.output_tokens));
  }
  if (b.wall_seconds !== undefined) {
    const used = (now - new Date(parent.created_at).getTime()) / 1000;
    left.wall_seconds = Math.floor(b.wall_seconds - used);
  }
  if (b.usd !== undefined) {
    // A root's `usd` is the whole tree's (spend.ts); capping by its own cost is the most it can
    // give, and the tree-wide check still stops every agent once the tree has spent it.
    const spent = agentCost(parent, config.prices, config.model.name) ?? 0;
    left.usd = b.usd - spent;
  }
  return left;
}
