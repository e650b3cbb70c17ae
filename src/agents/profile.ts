// A profile: what a fork may ask for by name (the config's `profiles`, agent files), beside the
// capabilities that narrow by it and below the config and the agent files that both build them.
import type { Budget, FileAccess } from "./agents.sql.js";
import type { Policy } from "../policy/policy.js";
import type { NetworkSetting } from "../sandbox/network/rules.js";
import type { SandboxMode } from "../sandbox/settings.js";

export interface Profile {
  system_prompt?: string;
  /** What the profile is for: listed in the `fork` tool's description. */
  description?: string;
  /** Tool names this profile may use (default: all). */
  tools?: string[];
  model?: string;
  budget?: Budget;
  /** Overrides the top-level `file_access` for agents of this profile. */
  file_access?: FileAccess;
  /** Narrows the tool policy for agents of this profile and their forks (policy.ts). */
  policy?: Policy;
  /** A fork with this profile may only make the sandbox stricter (capabilities.ts). */
  sandbox?: SandboxMode;
  /** The network for agents of this profile: only narrows the parent's (capabilities.ts). */
  sandbox_network?: NetworkSetting;
  /** "worktree": a child forked with this profile gets its own git worktree (issue 30). */
  isolation?: "worktree";
  /**
   * The JSON Schema a child forked with this profile must give its result in, unless the fork
   * passes its own `output_schema` (that one wins). Checked with ajv when it is loaded.
   */
  output_schema?: Record<string, unknown>;
}
