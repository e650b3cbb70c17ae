// Structural limits of a tree (SPEC §3), overridable from the config file.
export interface Limits {
  /** Levels below the root. */
  maxDepth: number;
  /** Living children per agent. */
  maxChildren: number;
  /** Living agents per tree. */
  maxAgentsPerTree: number;
  /** Upper bound of `wait`'s timeout, in seconds. */
  maxWaitSeconds: number;
  /** Largest mail body, in bytes (UTF-8). */
  maxMessageBytes: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxDepth: 3,
  maxChildren: 16,
  maxAgentsPerTree: 100,
  maxWaitSeconds: 3600,
  maxMessageBytes: 64 * 1024,
};
