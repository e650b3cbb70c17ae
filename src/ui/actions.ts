// What the person's input does: a message to the viewed agent (queued while it is busy), a
// captured line, or a slash command. Failures become one-line notices, never exceptions.
import { sql } from "drizzle-orm";
import type { AgentRow } from "../agents/agents.sql.js";
import { appendEvent } from "../agents/events.js";
import { displayName, resolveAgentRef } from "../agents/refs.js";
import { answerApproval, describeAnswer } from "../approvals/approvals.js";
import { childCapabilities } from "../agents/capabilities.js";
import { forkAgent, killAgent, reapDead, treeRepository } from "../agents/tree.js";
import type { Config } from "../config/config.js";
import type { Db } from "../db/client.js";
import { wordWarning } from "../db/warning.js";
import { isAllowed, rememberAllow } from "../mcp/allow.js";
import { allowLines } from "../mcp/project.js";
import { sendInput } from "../mail/input.js";
import { sendMail } from "../mail/send.js";
import { interruptAgent, interruptSubtree } from "../runtime/interrupt.js";
import { requestWait } from "../runtime/person-wait.js";
import { randomUUID } from "node:crypto";
import { createWorktree, planWorktree, removeWorktree } from "../agents/worktree.js";
import { diffAgent, discardAgent, mergeAgent, WorktreeError } from "../agents/worktree-ops.js";
import { isCommand, parseCommand, type UiCommand } from "./commands.js";
import { rewindList, rewindNow, rewindQuestion, type RewindAsk } from "./rewind-action.js";
import { branchAgent } from "../agents/branch.js";
import { RewindError } from "../agents/rewind.js";
import { DEFAULT_CHECKPOINTS } from "../config/config.js";
import type { Controller } from "./controller.js";
import { describeFailure } from "./failure.js";
import { byAge, nearestLivingAncestor } from "./views/navigation.js";

export interface Actions {
  /** Enter: the input's whole text. False when a message could not be saved (so it is not lost). */
  submit(text: string): Promise<boolean>;
  /** Escape / first Ctrl+C: interrupts the viewed agent's turn (not its children). */
  interrupt(): Promise<boolean>;
  /** The stop key (as /stop): interrupts the viewed agent and all its descendants. */
  stop(): Promise<void>;
  readonly mode: "normal" | "capture";
  /** Model names for /model completion (cached; empty when the server has no /models). */
  modelNames(): Promise<string[]>;
  /**
   * Answers an approval request (the y/a/n keys; /approve and /deny come through submit). A
   * request answered first elsewhere becomes a notice saying by whom; false then.
   */
  answer(
    id: number,
    allow: boolean,
    options?: { tree?: boolean; reason?: string },
  ): Promise<boolean>;
}

export interface ActionsOptions {
  db: Db;
  config: Config;
  controller: Controller;
  /** Text for /help. */
  helpLines: () => string[];
  /** One line per agent, for /agents. */
  treeLines: () => string[];
  /** /search TEXT: the app opens the result list and runs the query. */
  search: (query: string) => void;
  /** /tasks: show the task board. */
  tasks: () => void;
  quit: () => void;
  onChange: () => void;
}

/** Says how a command went: a line in the scrollback, "error" in the alarm color. */
type Answer = (text: string, level?: "info" | "error") => void | Promise<void>;

export function createActions(options: ActionsOptions): Actions {
  const { db, config, controller } = options;
  // Capture is per agent: its lines wait for /fork there, while you look at other agents.
  const captures = new Map<string, string[]>();
  let models: Promise<string[]> | undefined;

  const state = controller.state;
  const current = (): AgentRow | undefined => controller.current();
  const say = (text: string) => controller.notice(text, "info");
  const complain = (text: string) => controller.notice(text, "error");

  const resolve = (ref: string) =>
    resolveAgentRef(db, { treeId: state.rootId, selfId: state.currentId }, ref);

  /**
   * A `command` event on the agent the command was typed into (never model context), shown at
   * once: the notice answering the command must land below it, not above.
   */
  const record = async (agentId: string, text: string, data: Record<string, unknown> = {}) => {
    controller.addEvent(await appendEvent(db, agentId, "command", text, { by: "person", ...data }));
  };

  /**
   * The answer to a recorded command (`killed …`, `mail sent …`): a `command` event below it on
   * the same agent, so another view, another TUI or a restart still shows what it did; shown
   * as a notice where the person is when that is elsewhere, or when it cannot be written.
   */
  const reply = async (agentId: string, text: string, level: "info" | "error" = "info") => {
    const event = await appendEvent(db, agentId, "command", text, {
      by: "person",
      answer: level,
    }).catch(() => undefined);
    if (event) controller.addEvent(event);
    if (!event || agentId !== state.currentId) controller.notice(text, level);
  };

  /** The agent a first `/discard` asked about: a second `/discard` of it confirms. */
  let discardAsked: string | undefined;
  /** What a first `/rewind N` asked about: the same `/rewind` again does it. */
  let rewindAsked: RewindAsk | undefined;

  const capturing = () => captures.get(state.currentId);
  const setMode = (next: "normal" | "capture") => {
    if (next === "capture") captures.set(state.currentId, []);
    else captures.delete(state.currentId);
    options.onChange();
  };

  /** child-1, child-2, … unique among the living children of `parentId`. */
  const defaultChildName = (parentId: string) => {
    const taken = new Set(
      [...state.agents.values()]
        .filter((a) => a.parent_id === parentId && a.state !== "dead")
        .map((a) => a.name),
    );
    let n = 1;
    while (taken.has(`child-${n}`)) n++;
    return `child-${n}`;
  };

  /** Interrupts `target` and its descendants (they stay alive); one line says how many. */
  const stopSubtree = async (
    target: AgentRow,
    answer: Answer = (text, level) => controller.notice(text, level),
  ): Promise<void> => {
    if (target.state === "dead") {
      return answer(`${displayName(target)} is dead: nothing to stop`, "error");
    }
    const n = (await interruptSubtree(db, target.id)).length;
    return answer(`stopped ${n} agent${n === 1 ? "" : "s"}${n === 0 ? ": none was running" : ""}`);
  };

  /** The request /approve and /deny answer by default: the viewed agent's oldest, else the tree's. */
  const defaultRequest = () =>
    state.approvals.find((a) => a.agent_id === state.currentId) ?? state.approvals[0];

  /** Throws when the request was answered first elsewhere (the caller says so). */
  const answerRequest = async (
    id: number,
    allow: boolean,
    how: { tree?: boolean; reason?: string } = {},
  ) => {
    const row = await answerApproval(
      db,
      id,
      {
        allow,
        scope: how.tree ? "tree" : "once",
        ...(how.reason ? { reason: how.reason } : {}),
        by: "person (tui)",
      },
      state.rootId,
    );
    state.approvals = state.approvals.filter((a) => a.id !== id);
    controller.refreshApprovals();
    // The asking agent's transcript shows the answer; elsewhere a notice says what happened.
    if (row.agent_id !== state.currentId) say(describeAnswer(row));
    options.onChange();
  };

  /** Runs a command; a failure after it was recorded is answered below the record, like success. */
  async function run(command: UiCommand, typed: string): Promise<void> {
    let recordedOn: string | undefined;
    const note = async (agentId: string, text: string, data?: Record<string, unknown>) => {
      await record(agentId, text, data);
      recordedOn = agentId;
    };
    try {
      await perform(command, typed, note);
    } catch (error) {
      if (recordedOn === undefined) throw error;
      await reply(recordedOn, describeFailure(error), "error");
    }
  }

  /**
   * `/mcp allow`: the project's .mcp.json as read when warren started (what its servers are) is
   * allowed; their tools are fetched, and every thread offers them within a re-read (2 s).
   */
  async function allowProject(): Promise<void> {
    const project = options.config.projectMcp;
    if (!project || Object.keys(project.servers).length === 0) {
      return complain(
        "no .mcp.json with MCP servers here (looked from the working directory up to the repository root)",
      );
    }
    if (isAllowed(project.allow)) return say(`${project.file} is allowed already (/mcp lists it)`);
    rememberAllow(project.allow);
    say([`allowed ${project.file}; its servers may start:`, ...allowLines(project)].join("\n"));
    const [{ refreshCatalog }, { listServers, listingLines }] = await Promise.all([
      import("../mcp/catalog.js"),
      import("../mcp/listing.js"),
    ]);
    await refreshCatalog(options.db, project.servers, (w) => complain(wordWarning(w)));
    return say(listingLines(await listServers(options.db, project.servers)).join("\n"));
  }

  async function perform(
    command: UiCommand,
    typed: string,
    record: (agentId: string, text: string, data?: Record<string, unknown>) => Promise<void>,
  ): Promise<void> {
    const here = state.currentId;
    // A /discard's question holds only until the next command.
    if (command.name !== "discard") discardAsked = undefined;
    const asked = rewindAsked;
    rewindAsked = undefined;
    switch (command.name) {
      case "help":
        return say(options.helpLines().join("\n"));
      case "exit":
        return options.quit();
      case "agents":
        return say(options.treeLines().join("\n"));
      case "mcp": {
        if (command.allow) return allowProject();
        // The MCP modules (and their SDK, ~1 MB) load on first use, not before the first frame.
        const { listServers, listingLines } = await import("../mcp/listing.js");
        const listing = await listServers(options.db, options.config.mcpServers ?? {});
        return say(listingLines(listing).join("\n"));
      }
      case "search":
        return options.search(command.query);
      case "tasks":
        return options.tasks();
      case "capture":
        if (capturing()) return say("already capturing: /fork makes the child, /cancel stops");
        if (current()?.state === "dead")
          return complain("this agent is dead: capture for a living one");
        setMode("capture");
        return say(
          "capture mode: what you type now is saved here and sent to no model; /fork makes a child with it as its task, /cancel stops",
        );
      case "cancel": {
        const lines = capturing()?.length;
        if (lines === undefined) return complain("not capturing (/capture starts)");
        setMode("normal");
        return say(
          `capture cancelled; the ${lines} captured line(s) stay visible and reach no model`,
        );
      }
      case "rewind": {
        const target = current();
        if (!target) return complain("no agent to rewind");
        try {
          if (command.turn === undefined) return say(await rewindList(db, target));
          const ask = { agentId: target.id, turn: command.turn, mode: command.mode };
          if (
            asked?.agentId !== ask.agentId ||
            asked.turn !== ask.turn ||
            asked.mode !== ask.mode
          ) {
            rewindAsked = ask;
            return say(await rewindQuestion(db, target, ask));
          }
          // Recorded after: the command's own line is not one of the events it rewinds.
          const text = await rewindNow(db, config, target, ask);
          await record(here, typed, { turn: ask.turn, mode: ask.mode });
          await controller.view(target.id);
          return reply(here, text);
        } catch (err) {
          if (err instanceof RewindError || err instanceof WorktreeError)
            return complain(err.message);
          throw err;
        }
      }
      case "fork": {
        const parent = current();
        if (!parent) return complain("no agent to fork from");
        if (command.at !== undefined) {
          try {
            const branch = await branchAgent(db, config, parent, command.at, {
              ...(command.childName ? { name: command.childName } : {}),
              ...(command.prompt ? { prompt: command.prompt } : {}),
              worktree: command.worktree === true,
              maxFileBytes: (config.checkpoints ?? DEFAULT_CHECKPOINTS).maxFileBytes,
            });
            await record(here, typed, { branch: branch.id, at: command.at });
            controller.putAgent(branch);
            await controller.view(branch.id);
            return reply(
              here,
              `forked ${displayName(branch)} from before turn ${command.at}${
                command.prompt ? "; it is running" : ": type its first message"
              }`,
            );
          } catch (err) {
            if (err instanceof RewindError) return complain(err.message);
            throw err;
          }
        }
        const name = command.childName ?? defaultChildName(here);
        const captured = capturing();
        const parts = captured ? [...captured] : [];
        if (command.prompt) parts.push(command.prompt);
        const prompt = parts.join("\n").trim();
        // Recorded first so the transcript reads "» /fork", then "↳ forked"; the captured task is
        // the child's first message, the parent's record names the child only.
        await record(here, typed, {
          name,
          ...(command.prompt ? { prompt: command.prompt } : {}),
          ...(captured ? { captured_lines: captured.length } : {}),
        });
        // --worktree: the child's own git worktree, made first, removed again if the fork fails.
        let isolated:
          { id: string; worktree: Awaited<ReturnType<typeof createWorktree>> } | undefined;
        if (command.worktree) {
          const id = randomUUID();
          const repository = await treeRepository(db, parent);
          const plan = await planWorktree(parent.cwd ?? process.cwd(), name, id, repository);
          isolated = { id, worktree: await createWorktree(plan, false) };
        }
        const child = await forkAgent(
          db,
          here,
          {
            name,
            ...(prompt ? { prompt } : {}),
            context: "inherit",
            // No profile: the default base prompt (identity is added when a request is built).
            systemPrompt: null,
            // Never wider than the parent's, as the fork tool (agents/capabilities.ts).
            ...childCapabilities(config, parent, {}),
            ...(isolated
              ? { id: isolated.id, worktree: isolated.worktree, cwd: isolated.worktree.path }
              : {}),
          },
          config.limits,
        ).catch(async (err: unknown) => {
          const wt = isolated?.worktree;
          if (wt) await removeWorktree(wt).catch(() => undefined);
          throw err;
        });
        if (captured) setMode("normal");
        controller.putAgent(child);
        await controller.view(child.id);
        return reply(
          here,
          prompt
            ? `forked ${displayName(child)} with its task; it is running`
            : `forked ${displayName(child)}: an idle child with this context; type its first message`,
        );
      }
      case "kill": {
        const target = command.agent ? await resolve(command.agent) : current();
        if (!target) return complain("no agent to kill");
        if (!target.parent_id) return complain("the root agent cannot be killed");
        await record(here, typed, { target: target.id });
        const killed = await killAgent(db, { targetId: target.id, byAgentId: null });
        if (killed.includes(here)) {
          const to = target.parent_id ?? state.rootId;
          await controller.view(to);
        }
        return reply(
          here,
          `killed ${displayName(target)}${killed.length > 1 ? ` and ${killed.length - 1} descendant(s)` : ""}`,
        );
      }
      case "diff":
      case "merge":
      case "discard": {
        const target = command.agent ? await resolve(command.agent) : current();
        if (!target) return complain(`no agent to ${command.name}`);
        try {
          if (command.name === "diff") {
            const text = (await diffAgent(target)).replace(/\n$/, "");
            const lines = text.split("\n");
            const shown =
              lines.length > 200
                ? [
                    ...lines.slice(0, 200),
                    `… ${lines.length - 200} more lines (warren diff ${target.id.slice(0, 8)})`,
                  ]
                : lines;
            return say(text ? shown.join("\n") : `${displayName(target)} changed nothing`);
          }
          if (command.name === "discard" && discardAsked !== target.id) {
            discardAsked = target.id;
            return say(
              `/discard removes ${displayName(target)}'s worktree and branch with all its work; type /discard again to confirm`,
            );
          }
          discardAsked = undefined;
          await record(here, typed, { target: target.id });
          const fresh = (await resolve(target.id)) ?? target;
          const done =
            command.name === "merge" ? await mergeAgent(db, fresh) : await discardAgent(db, fresh);
          return reply(here, done);
        } catch (err) {
          if (err instanceof WorktreeError) return complain(err.message);
          throw err;
        }
      }
      case "stop": {
        const target = command.agent ? await resolve(command.agent) : current();
        if (!target) return complain("no agent to stop");
        await record(here, typed, { target: target.id });
        return stopSubtree(target, (text, level) => reply(here, text, level));
      }
      case "send": {
        if (current()?.state === "dead") return complain("this agent is dead: it sends no mail");
        const to = await resolve(command.agent);
        await record(here, typed, { to: to.id });
        const receipt = await sendMail(db, {
          treeId: state.rootId,
          fromId: here,
          toId: to.id,
          body: command.message,
          maxBytes: config.limits.maxMessageBytes,
        });
        return reply(here, `mail sent to ${displayName(to)}${receipt.woke ? " (it woke up)" : ""}`);
      }
      case "wait": {
        const agent = current();
        if (agent && agent.state !== "idle") {
          return complain(`${displayName(agent)} is ${agent.state}; /wait needs it idle`);
        }
        const ids: string[] = [];
        for (const ref of command.agents) ids.push((await resolve(ref)).id);
        await record(here, typed, { from_agents: ids });
        await requestWait(
          db,
          here,
          { timeoutSeconds: command.timeoutSeconds, ...(ids.length ? { fromAgents: ids } : {}) },
          config.limits,
        );
        return;
      }
      case "reap": {
        const all = [...state.agents.values()];
        const reaped = await reapDead(db, state.rootId);
        const reapedSet = new Set(reaped);
        const landing = reapedSet.has(here)
          ? (nearestLivingAncestor(
              all.map((a) => (reapedSet.has(a.id) ? { ...a, reaped_at: new Date() } : a)),
              here,
            ) ?? state.rootId)
          : here;
        controller.markReaped(reaped);
        if (landing !== here) await controller.view(landing);
        await record(landing, typed, { reaped });
        return reply(
          landing,
          reaped.length
            ? `reaped ${reaped.length} dead agent${reaped.length === 1 ? "" : "s"}; their history stays in the database`
            : "nothing to reap: no dead agents",
        );
      }
      case "approve":
      case "deny": {
        const id = command.id ?? defaultRequest()?.id;
        if (id === undefined) return complain("no tool call is waiting for approval");
        if (command.name === "approve") return answerRequest(id, true, { tree: command.tree });
        return answerRequest(id, false, command.reason ? { reason: command.reason } : {});
      }
      case "model": {
        const rows = await db.execute(
          sql`update agents set model = ${command.model} where id = ${here} and state <> 'dead' returning id`,
        );
        if (rows.rows.length === 0) return complain("this agent is dead; its model stays");
        await record(here, typed, { model: command.model });
        return reply(here, `model of this agent set to ${command.model}`);
      }
    }
  }

  return {
    get mode() {
      return capturing() ? "capture" : "normal";
    },
    async submit(text) {
      const command = isCommand(text);
      try {
        if (command) {
          const parsed = parseCommand(text);
          if (!parsed.ok) complain(parsed.error);
          else await run(parsed.command, text.trim());
          return true;
        }
        const body = text.startsWith("//") ? text.slice(1) : text;
        const agent = current();
        if (agent?.state === "dead") {
          complain(`${displayName(agent)} is dead: it takes no input`);
          return true;
        }
        const captured = capturing();
        if (captured) {
          await appendEvent(db, state.currentId, "capture", body, { by: "person" });
          captured.push(body);
          return true;
        }
        await sendInput(db, state.currentId, body, config.limits.maxMessageBytes);
        return true;
      } catch (error) {
        complain(describeFailure(error));
        return command;
      }
    },
    async interrupt() {
      try {
        return await interruptAgent(db, state.currentId);
      } catch (error) {
        complain(`interrupt failed: ${describeFailure(error)}`);
        return false;
      }
    },
    async stop() {
      const target = current();
      if (!target) return;
      try {
        await stopSubtree(target);
      } catch (error) {
        complain(`stop failed: ${describeFailure(error)}`);
      }
    },
    modelNames() {
      models ??= fetchModels(config).catch(() => []);
      return models;
    },
    async answer(id, allow, answerOptions) {
      try {
        await answerRequest(id, allow, answerOptions);
        return true;
      } catch (error) {
        complain(describeFailure(error));
        controller.refreshApprovals();
        return false;
      }
    },
  };
}

/** The agents of the tree as indented lines (for /agents). */
export function treeLines(agents: readonly AgentRow[], currentId: string): string[] {
  const children = new Map<string | null, AgentRow[]>();
  for (const agent of [...agents].sort(byAge)) {
    const list = children.get(agent.parent_id) ?? [];
    list.push(agent);
    children.set(agent.parent_id, list);
  }
  const lines: string[] = [];
  const walk = (parentId: string | null, depth: number) => {
    for (const agent of children.get(parentId) ?? []) {
      const mark = agent.id === currentId ? " ← you are here" : "";
      const doing = agent.activity ? ` — ${agent.activity}` : "";
      lines.push(`${"  ".repeat(depth)}${displayName(agent)}  ${agent.state}${doing}${mark}`);
      walk(agent.id, depth + 1);
    }
  };
  const roots = agents.filter((a) => !a.parent_id || !agents.some((p) => p.id === a.parent_id));
  for (const root of roots) {
    const mark = root.id === currentId ? " ← you are here" : "";
    lines.push(`${displayName(root)}  ${root.state}${mark}`);
    walk(root.id, 1);
  }
  return lines;
}

/** GET {base}/models → the ids the server offers (OpenAI-compatible servers have it; some not). */
async function fetchModels(config: Config): Promise<string[]> {
  const base = (config.model.baseURL ?? "https://api.openai.com/v1").replace(/\/+$/, "");
  const response = await fetch(`${base}/models`, {
    headers: config.model.apiKey ? { authorization: `Bearer ${config.model.apiKey}` } : {},
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok) return [];
  const body = (await response.json()) as { data?: { id?: unknown }[] };
  return (body.data ?? []).flatMap((m) => (typeof m.id === "string" ? [m.id] : [])).sort();
}
