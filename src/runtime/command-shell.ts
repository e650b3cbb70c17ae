// A command file's `` !`cmd` `` (skills/command-files.ts), run as an agent's bash call would be:
// the same policy decision (the config's policy and the agent's narrowing chain; a deny from any
// source wins) and the same sandboxed runner with the agent's sandbox and network. A call the
// policy would ask about is run only when the person's answer is already "all" (`--approve all`);
// otherwise it is not run and its place in the prompt says so: nobody is asked while a command is
// being expanded, and nothing runs outside the policy.
import type { AgentRow } from "../agents/agents.sql.js";
import { capabilitiesOf } from "../agents/capabilities.js";
import { shellSettingsOf, type Config } from "../config/config.js";
import { decideCall, type ApproveMode } from "../policy/policy.js";
import { bashTool } from "../tools/bash.js";

/** Seconds a command file's command may take. */
const TIMEOUT_S = 60;

export interface CommandShellOptions {
  config: Config;
  cwd: string;
  /** The agent the command's message goes to: its narrowing policies and sandbox apply. */
  agent?: AgentRow;
  /** How `ask` is answered where the command runs (`-p --approve`, the config's `approve`). */
  approve?: ApproveMode;
  signal?: AbortSignal;
  /** One line per command not run, or run and failed. */
  onWarning: (line: string) => void;
}

export function commandShell(options: CommandShellOptions): (command: string) => Promise<string> {
  const { config, cwd, agent } = options;
  const caps = agent ? capabilitiesOf(config, agent) : undefined;
  return async (command) => {
    const answer = await decideCall(config.policy, agent?.policy ?? [], "bash", { command }, cwd);
    const approve = options.approve ?? config.approve ?? "ask";
    const runs = answer.verdict === "allow" || (answer.verdict === "ask" && approve === "all");
    if (!runs) {
      const why =
        answer.verdict === "deny" ? "the tool policy denies it" : "the tool policy asks about it";
      options.onWarning(`!\`${command}\` not run: ${why} (bash)`);
      return `[not run: \`${command}\` — ${why}]`;
    }
    const outcome = await bashTool.run(
      { command, timeout: TIMEOUT_S },
      {
        cwd,
        signal: options.signal ?? new AbortController().signal,
        shell: shellSettingsOf(config, caps?.sandbox, caps?.network),
      },
    );
    if (!outcome.ok) {
      options.onWarning(`!\`${command}\` failed: ${outcome.error.message}`);
      return `[failed: \`${command}\` — ${outcome.error.message}]`;
    }
    const value = outcome.value as { exit_code: number | null; output: string };
    if (value.exit_code !== 0) {
      options.onWarning(`!\`${command}\` exited ${value.exit_code ?? "on a signal"}`);
    }
    return value.output;
  };
}
