// What the person's trust changes in a running process (SPEC §9, `/trust`): the parts of a Config
// that a project's trusted settings files decide. Each thread keeps one Config object that every
// turn reads (runtime/scheduler.ts hands the same object to each turn), so these parts are
// replaced in place: a turn under way sees them from its next tool call, the next turn at once.
import type { Config } from "./config.js";

/** The Config fields a trusted settings file can change: its rules, hooks and env. */
const TRUSTED_PARTS = ["settingsRules", "claudeSettings", "hooks", "shellEnv"] as const;

/** Replaces `target`'s trust-dependent parts with `next`'s (a field `next` lacks is removed). */
export function applyTrusted(target: Config, next: Config): void {
  const into = target as unknown as Record<string, unknown>;
  const from = next as unknown as Record<string, unknown>;
  for (const key of TRUSTED_PARTS) {
    if (key in from) into[key] = from[key];
    else delete into[key];
  }
}
