// Where the turn meets the person's hooks (hooks/, SPEC §9): the event's JSON built from the agent
// and the call (Claude Code's field names, plus warren's agent_id, agent_name, parent_id), the
// matching hooks run together in the agent's working directory and sandbox, and each failure
// shown as one line: a warning on warren's stderr (or the TUI's status) and a `system` line in the
// agent's scrollback. A hook never throws into the turn.
import type { AgentRow } from "../agents/agents.sql.js";
import { capabilitiesOf } from "../agents/capabilities.js";
import type { Fence } from "../agents/errors.js";
import { appendEvent } from "../agents/events.js";
import { shellSettingsOf, type Config } from "../config/config.js";
import { traceparentFor, withTraceparent } from "../telemetry/spans.js";
import type { Verdict } from "../policy/policy.js";
import type { Db } from "../db/client.js";
import { notice, type WarningSink } from "../db/warning.js";
import { hookRefusal, hooksFor, projectDir, type HookEvent } from "../hooks/config.js";
import {
  combinePre,
  failureLine,
  postToolUseFeedback,
  preToolUseAnswer,
  type HookRun,
  type PreOutcome,
} from "../hooks/decision.js";
import { runHook } from "../hooks/run.js";
import type { ToolCall } from "../llm/model.js";

/** Who a hook runs for, and how its failures are told. */
export interface HookSite {
  db: Db;
  config: Config;
  agent: AgentRow;
  signal: AbortSignal;
  fence?: Fence;
  onWarning?: WarningSink;
}

/** Are any hooks configured for `event` (any matcher)? */
export function hasHooks(config: Config, event: HookEvent): boolean {
  return (config.hooks?.[event]?.length ?? 0) > 0;
}

/** The Stop event of an agent: `Stop` for a root, `SubagentStop` for a child. */
export function stopEventOf(agent: Pick<AgentRow, "parent_id">): HookEvent {
  return agent.parent_id ? "SubagentStop" : "Stop";
}

async function runEvent(
  site: HookSite,
  event: HookEvent,
  /** What the matchers match (undefined: every hook of the event). */
  subject: string | undefined,
  fields: Record<string, unknown>,
): Promise<{ command: string; run: HookRun }[]> {
  const commands = hooksFor(site.config.hooks, event, subject);
  if (commands.length === 0) return [];
  const { agent, config } = site;
  const cwd = agent.cwd ?? process.cwd();
  const input = JSON.stringify({
    session_id: agent.id,
    hook_event_name: event,
    cwd,
    ...fields,
    agent_id: agent.id,
    agent_name: agent.name,
    parent_id: agent.parent_id ?? null,
    tree_id: agent.tree_id,
  });
  const caps = capabilitiesOf(config, agent);
  // With telemetry on, TRACEPARENT names the call's span (or the agent's run): a traced hook nests.
  const callId = typeof fields.tool_use_id === "string" ? fields.tool_use_id : undefined;
  const shell = withTraceparent(
    shellSettingsOf(config, caps.sandbox, caps.network),
    traceparentFor(agent.id, callId),
  );
  const pathVar = config.shellEnv.set.PATH ?? process.env.PATH;
  // All matching hooks at once, as Claude Code runs them; each looked up first, in this agent's
  // working directory: a hook that would run a file an agent could have written is not run.
  return Promise.all(
    commands.map(async (hook) => {
      const refused = hookRefusal(event, hook.command, cwd, config.runTrust, pathVar);
      if (refused)
        return { command: hook.command, run: { kind: "refused", line: refused } as const };
      return {
        command: hook.command,
        run: await runHook(hook.command, input, {
          cwd,
          projectDir: projectDir(cwd),
          shell,
          signal: site.signal,
          timeoutSeconds: hook.timeout,
          ...(hook.sandbox === false && { sandbox: false }),
        }),
      };
    }),
  );
}

/** One line for a failed hook: a warning, and a `system` line in the agent's scrollback. */
async function report(site: HookSite, event: HookEvent, line: string): Promise<void> {
  site.onWarning?.(notice(`${site.agent.name}: ${line}`));
  if (site.signal.aborted) return;
  // Shown to people, never to the model; cosmetic, so a failed write is dropped.
  await appendEvent(
    site.db,
    site.agent.id,
    "system",
    line,
    { hook: event },
    {
      ...(site.fence ? { epoch: site.fence.epoch } : {}),
    },
  ).catch(() => undefined);
}

/**
 * PreToolUse: run after the policy answered `verdict` (never deny), before the call starts or a
 * person is asked. The outcome is never wider than `verdict`.
 */
export async function preToolUse(
  site: HookSite,
  call: ToolCall,
  args: unknown,
  verdict: Verdict,
): Promise<PreOutcome> {
  const runs = await runEvent(site, "PreToolUse", call.name, {
    tool_name: call.name,
    tool_input: args,
    tool_use_id: call.id,
  });
  const answers = runs.map(({ command, run }) => preToolUseAnswer(command, run));
  for (const a of answers) {
    if (a.kind === "failed" || (a.kind === "block" && a.line)) {
      await report(site, "PreToolUse", a.line!);
    }
  }
  return combinePre(verdict, answers);
}

/** PostToolUse, once the call ran: what its hooks tell the model (exit 2), if anything. */
export async function postToolUse(
  site: HookSite,
  call: ToolCall,
  args: unknown,
  response: unknown,
): Promise<string | undefined> {
  const runs = await runEvent(site, "PostToolUse", call.name, {
    tool_name: call.name,
    tool_input: args,
    tool_response: response,
    tool_use_id: call.id,
  });
  const feedback: string[] = [];
  for (const { command, run } of runs) {
    const said = postToolUseFeedback(command, run);
    if (said.line) await report(site, "PostToolUse", said.line);
    if (said.feedback) feedback.push(said.feedback);
  }
  return feedback.length ? feedback.join("\n") : undefined;
}

/** Stop / SubagentStop: the model answered without calls; output ignored but for failures. */
export async function stopHooks(site: HookSite, lastText: string): Promise<void> {
  const event = stopEventOf(site.agent);
  // SubagentStop's matcher is the child's profile; Stop's is ignored, as in Claude Code.
  const subject = event === "SubagentStop" ? (site.agent.profile ?? "") : undefined;
  const runs = await runEvent(site, event, subject, {
    stop_hook_active: false,
    last_assistant_message: lastText,
    ...(event === "SubagentStop" ? { agent_type: site.agent.profile ?? "" } : {}),
  });
  await reportFailures(site, event, runs);
}

/** Notification: warren needs the person (`permission_prompt`, `error`). */
export async function notificationHooks(
  site: HookSite,
  type: "permission_prompt" | "error",
  message: string,
): Promise<void> {
  const runs = await runEvent(site, "Notification", type, {
    message,
    notification_type: type,
  });
  await reportFailures(site, "Notification", runs);
}

async function reportFailures(
  site: HookSite,
  event: HookEvent,
  runs: { command: string; run: HookRun }[],
): Promise<void> {
  for (const { command, run } of runs) {
    // Exit 2 means nothing for these events, but is no failure either (Claude Code's contract).
    const line = failureLine(event, command, run);
    if (line) await report(site, event, line);
  }
}
