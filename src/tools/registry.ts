// All tools in one alphabetised list, filtered by an agent's profile.
import type { Profile } from "../config/config.js";
import type { ToolSpec } from "../llm/model.js";
import type { AgentToolContext } from "./agent-context.js";
import { forkTool } from "./fork.js";
import { killTool } from "./kill.js";
import { sendTool } from "./send.js";
import type { Tool } from "./tool.js";
import { waitTool } from "./wait.js";
import { workTools } from "./work-tools.js";

export type AnyTool = Tool<AgentToolContext>;

export const allTools: AnyTool[] = [forkTool, killTool, sendTool, waitTool, ...workTools].sort(
  (a, b) => a.name.localeCompare(b.name),
);

/** The tools an agent may use: its profile's list, or all of them. */
export function toolsFor(profile: Profile | undefined): AnyTool[] {
  if (!profile?.tools) return allTools;
  const allowed = new Set(profile.tools);
  return allTools.filter((t) => allowed.has(t.name));
}

export function toolSpecs(tools: AnyTool[]): ToolSpec[] {
  return tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
}
