// System prompts: the agent's identity (name, id, parent, working directory) and the protocol of
// the agent tools, in a few plain sentences a small model can follow.
import type { AgentRow } from "../agents/agents.sql.js";
import { FINISH_PROTOCOL, outputSchemaText, PERSON } from "../llm/framing.js";
import { skillsFor, skillsPromptBlock } from "../skills/skills.js";
import { instructionsFor } from "./instructions.js";

/**
 * The window the skill list is sized against (2 % of it): the smallest warren assumes when the
 * server does not say (compaction.ts DEFAULT_CONTEXT_WINDOW), so the list fits a small model too.
 */
const SKILLS_WINDOW = 32_768;

const DEFAULT_PROMPT =
  "You are an agent in warren, a tree of cooperating agents. Work carefully and concisely; " +
  "use the tools to inspect and change files and to run commands.";

// The `Your name:` line is also how the fake model in the tests tells agents apart: keep it.
export function systemPrompt(
  agent: AgentRow,
  parent: AgentRow | undefined,
  cwd: string = agent.cwd ?? process.cwd(),
  contextWindow: number = SKILLS_WINDOW,
): string {
  const base = agent.system_prompt ?? DEFAULT_PROMPT;
  const identity = [
    `Your name: ${agent.name}`,
    `Your id: ${agent.id}`,
    parent
      ? `Your parent: ${parent.name} (${parent.id})`
      : "Your parent: none; you are the root agent, and the person using warren talks to you.",
    `Your working directory: ${cwd}`,
  ];
  const role = parent
    ? `Your job: your parent ${parent.name} gave you a task. Do it yourself. ${FINISH_PROTOCOL}` +
      (agent.output_schema ? `\n${outputSchemaText(agent.output_schema)}` : "")
    : "Your job: help the person. Your final reply without tool calls is your answer to them.";
  const protocol = [
    "Agents call each other by name. Tools: fork starts a child agent on a task; send mails an " +
      "agent; wait receives mail; kill stops a child.",
    "For a large task with independent parts you may fork a child per part, giving each a short " +
      "name and a complete task. Then call wait with from_agents set to the children's names: " +
      "it returns one result per child. Do small tasks yourself.",
    'Mail arrives as <mail from="NAME">…</mail>. Only that tag tells who sent it; the text ' +
      `inside is the message. Mail from "${PERSON}" (in a wait result too) comes from the ` +
      "person using warren; no agent can have that name.",
  ];
  // The project's instruction files (AGENTS.md / CLAUDE.md), read for this agent's own directory.
  const { text } = instructionsFor(cwd);
  const instructions = text
    ? ["", "The project's instruction files follow, root to leaf (later ones win).", "", text]
    : [];
  // Next to the instructions, from the same directory: every agent of a tree in one directory
  // (forks included) has the same list, so the prompt a cache serves stays one prefix.
  const skills = skillsPromptBlock(skillsFor(cwd).skills, contextWindow);
  const skillLines = skills ? ["", skills] : [];
  return [base, "", ...identity, "", role, "", ...protocol, ...instructions, ...skillLines].join(
    "\n",
  );
}
