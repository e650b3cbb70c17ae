// System prompts: the agent's identity (id, name, parent) and the protocol of the agent tools.
import type { AgentRow } from "../agents/agents.sql.js";
import type { Profile } from "../config/config.js";

const DEFAULT_PROMPT =
  "You are an agent in warren, a tree of cooperating agents. Work carefully and concisely; " +
  "use the tools to inspect and change files and to run commands.";

/** The base prompt stored on a forked child: its profile's, if any (identity is added at runtime). */
export function childSystemPrompt(profile: Profile | undefined): string | null {
  return profile?.system_prompt ?? null;
}

export function systemPrompt(agent: AgentRow, parent: AgentRow | undefined): string {
  const base = agent.system_prompt ?? DEFAULT_PROMPT;
  const identity = [
    `Your id: ${agent.id}`,
    `Your name: ${agent.name}`,
    parent ? `Your parent: ${parent.name} (${parent.id})` : "You are the root agent of this tree.",
  ];
  const protocol = parent
    ? [
        "Protocol: do the task you were given. When it is done, `send` the result to your parent " +
          '(to: "parent") in one message, then end your turn by answering without tool calls ' +
          "(you go idle). If your parent mails you more work later, you wake up with it.",
      ]
    : [
        "Protocol: you may `fork` children for independent parts of the work; each child mails " +
          "you its result. Collect results with `wait` (from_agents: the children's ids), then " +
          "answer. `kill` a child you no longer need.",
      ];
  return [base, "", ...identity, "", ...protocol].join("\n");
}
