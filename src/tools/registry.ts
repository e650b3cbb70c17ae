// All tools in one alphabetised list, filtered by an agent's capabilities (agents/capabilities.ts).
import type { Profile } from "../agents/profile.js";
import type { ToolSpec } from "../llm/model.js";
import type { AgentToolContext } from "./agent-context.js";
import { forkTool } from "./fork.js";
import { killTool } from "./kill.js";
import { sendTool } from "./send.js";
import { hasSkills, skillTool } from "./skill.js";
import { taskAddTool } from "./task-add.js";
import { taskClaimTool } from "./task-claim.js";
import { taskDoneTool } from "./task-done.js";
import { taskListTool } from "./task-list.js";
import type { Tool } from "./tool.js";
import { waitTool } from "./wait.js";
import { workTools } from "./work-tools.js";
import { derived } from "../derived.js";
import { matchesPattern } from "../policy/patterns.js";

export type AnyTool = Tool<AgentToolContext>;

export const allTools: AnyTool[] = [
  forkTool,
  killTool,
  sendTool,
  skillTool,
  waitTool,
  taskAddTool,
  taskClaimTool,
  taskDoneTool,
  taskListTool,
  ...workTools,
].sort((a, b) => a.name.localeCompare(b.name));

// Both lists are asked for on every model request and never change for a tool set, so each is
// built once: the same array each time also lets the model adapter and the context estimate keep
// what they derive from it (openai.ts, compaction.ts). Read-only. Tool sets are few (one per
// profile and the narrowings forks made of them); the map is bounded all the same.
const setsOf = new WeakMap<AnyTool[], Map<string, AnyTool[]>>();
const MAX_SETS = 256;
const specsOf = new WeakMap<AnyTool[], ToolSpec[]>();
const specsWithProfiles = new WeakMap<Record<string, Profile>, WeakMap<AnyTool[], ToolSpec[]>>();
const NO_PROFILES: Record<string, Profile> = {};
const withMcp = new WeakMap<AnyTool[], AnyTool[]>();

/**
 * The tools an agent may use: those named (capabilitiesOf(...).tools; a name with `*` is a
 * pattern, `mcp__github__*`), or all of them (null). `mcp` is this thread's MCP tools
 * (mcp/catalog.ts mcpToolsFor), merged into the one alphabetised list.
 */
export function toolsFor(
  names: readonly string[] | null | undefined,
  mcp: AnyTool[] = [],
): AnyTool[] {
  const universe =
    mcp.length === 0
      ? allTools
      : derived(withMcp, mcp, (extra) =>
          [...allTools, ...extra].sort((a, b) => a.name.localeCompare(b.name)),
        );
  if (!names) return universe;
  let sets = setsOf.get(universe);
  if (!sets) {
    sets = new Map();
    setsOf.set(universe, sets);
  }
  const key = [...names].sort().join("\u0000");
  let tools = sets.get(key);
  if (!tools) {
    const allowed = new Set(names);
    const patterns = names.filter((n) => n.includes("*"));
    tools = universe.filter(
      (t) => allowed.has(t.name) || patterns.some((p) => matchesPattern(p, t.name)),
    );
    if (sets.size >= MAX_SETS) sets.clear();
    sets.set(key, tools);
  }
  return tools;
}

const withoutSkill = new WeakMap<AnyTool[], AnyTool[]>();

/**
 * `tools` as offered to an agent working in `cwd`: the skill tool only where it has skills
 * (skills/skills.ts), so an agent without any sees no tool it cannot use. The same array for the
 * same list either way (the adapter caches by it).
 */
export function withSkills(tools: AnyTool[], cwd: string): AnyTool[] {
  if (!tools.includes(skillTool) || hasSkills(cwd)) return tools;
  return derived(withoutSkill, tools, (list) => list.filter((t) => t !== skillTool));
}

/**
 * What the model is told about `tools`. With profiles, the `fork` tool's description lists them
 * by name with their descriptions, so the model can choose one (SPEC section 3).
 */
export function toolSpecs(
  tools: AnyTool[],
  profiles: Record<string, Profile> = NO_PROFILES,
): ToolSpec[] {
  const names = Object.keys(profiles);
  if (names.length === 0) {
    return derived(specsOf, tools, (list) =>
      list.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    );
  }
  const byTools = derived(specsWithProfiles, profiles, () => new WeakMap());
  return derived(byTools, tools, (list) => {
    const listing = names
      .sort()
      .map((n) => `- ${n}${profiles[n]!.description ? `: ${profiles[n]!.description}` : ""}`);
    const forkNote = `\nProfiles you may pass as "profile":\n${listing.join("\n")}`;
    return list.map((t) => ({
      name: t.name,
      description: t.name === "fork" ? t.description + forkNote : t.description,
      parameters: t.parameters,
    }));
  });
}
