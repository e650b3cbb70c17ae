// All tools in one alphabetised list, filtered by an agent's capabilities (agents/capabilities.ts).
import type { Profile } from "../config/config.js";
import type { ToolSpec } from "../llm/model.js";
import type { AgentToolContext } from "./agent-context.js";
import { forkTool } from "./fork.js";
import { killTool } from "./kill.js";
import { sendTool } from "./send.js";
import { taskAddTool } from "./task-add.js";
import { taskClaimTool } from "./task-claim.js";
import { taskDoneTool } from "./task-done.js";
import { taskListTool } from "./task-list.js";
import type { Tool } from "./tool.js";
import { waitTool } from "./wait.js";
import { workTools } from "./work-tools.js";
import { derived } from "../derived.js";

export type AnyTool = Tool<AgentToolContext>;

export const allTools: AnyTool[] = [
  forkTool,
  killTool,
  sendTool,
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
const byNames = new Map<string, AnyTool[]>();
const MAX_SETS = 256;
const specsOf = new WeakMap<AnyTool[], ToolSpec[]>();
const specsWithProfiles = new WeakMap<Record<string, Profile>, WeakMap<AnyTool[], ToolSpec[]>>();
const NO_PROFILES: Record<string, Profile> = {};

/** The tools an agent may use: those named (capabilitiesOf(...).tools), or all of them (null). */
export function toolsFor(names: readonly string[] | null | undefined): AnyTool[] {
  if (!names) return allTools;
  const key = [...names].sort().join("\u0000");
  let tools = byNames.get(key);
  if (!tools) {
    const allowed = new Set(names);
    tools = allTools.filter((t) => allowed.has(t.name));
    if (byNames.size >= MAX_SETS) byNames.clear();
    byNames.set(key, tools);
  }
  return tools;
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
