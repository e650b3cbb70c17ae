// Claude Code's model names in agent files and profiles (`model: sonnet`, SPEC §9): resolved
// through the config's `model_aliases` ({"sonnet": "gpt-4.1"}); a Claude Code alias without an
// entry is dropped, so the child runs on its parent's model (one warning at load) and the alias is
// never sent to a server as a model id. `inherit` (the parent's model) never reaches a profile.
import type { Profile } from "../agents/profile.js";

/** Claude Code's model aliases (its `/model` names), which no OpenAI-compatible server knows. */
export const CLAUDE_MODEL_ALIASES = new Set([
  "sonnet",
  "opus",
  "haiku",
  "opusplan",
  "default",
  "best",
  "sonnet[1m]",
  "opus[1m]",
]);

/**
 * Each profile's `model` through `aliases` (in place: `profiles` is the config's fresh copy);
 * returns one warning per profile whose Claude Code alias has no entry. `files`: where a profile
 * from an agent file came from, for the warning.
 */
export function resolveModelAliases(
  profiles: Record<string, Profile>,
  aliases: Record<string, string>,
  files: Record<string, string> = {},
): string[] {
  const warnings: string[] = [];
  for (const [name, profile] of Object.entries(profiles)) {
    const model = profile?.model;
    if (model === undefined) continue;
    const mapped = aliases[model] ?? aliases[model.toLowerCase()];
    if (mapped !== undefined) {
      profiles[name] = { ...profile, model: mapped };
    } else if (model === "inherit" || CLAUDE_MODEL_ALIASES.has(model.toLowerCase())) {
      const { model: _dropped, ...rest } = profile;
      profiles[name] = rest;
      if (model === "inherit") continue;
      const where = files[name] ?? `profiles.${name}`;
      warnings.push(
        `${where}: model "${model}" is Claude Code's name, with no entry in the config's model_aliases ({"${model}": "MODEL"}); profile ${name} runs on its parent's model`,
      );
    }
  }
  return warnings;
}
