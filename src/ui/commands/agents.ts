// Commands on the tree's agents: /capture and /cancel, /fork, /kill, /stop, /send, /wait, /reap
// and /model.
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import type { AgentRow } from "../../agents/agents.sql.js";
import { childCapabilities } from "../../agents/capabilities.js";
import { displayName } from "../../agents/refs.js";
import { forkAgent, killAgent, reapDead, treeRepository } from "../../agents/tree.js";
import { createWorktree, planWorktree, removeWorktree } from "../../agents/worktree.js";
import { sendMail } from "../../mail/send.js";
import { interruptSubtree } from "../../runtime/interrupt.js";
import { requestWait } from "../../runtime/person-wait.js";
import { nearestLivingAncestor } from "../views/navigation.js";
import { branchAgent } from "../../runtime/branch.js";
import { RewindError } from "../../agents/rewind.js";
import { DEFAULT_CHECKPOINTS } from "../../config/config.js";
import {
  commandTarget,
  complainOn,
  noArgs,
  oneAgent,
  type CommandContext,
  type CommandOf,
  type CommandSpec,
  type Parsed,
} from "./types.js";

export const WAIT_MAX_SECONDS = 3600;

export const capture: CommandSpec<"capture"> = {
  name: "capture",
  usage: "/capture",
  help: "compose a task: typed lines are saved, never sent to a model; /fork makes it a child's task",
  parse: noArgs("capture"),
  run(ctx) {
    if (ctx.capturing()) return ctx.say("already capturing: /fork makes the child, /cancel stops");
    if (ctx.current()?.state === "dead") {
      return ctx.complain("this agent is dead: capture for a living one");
    }
    ctx.setMode("capture");
    ctx.say(
      "capture mode: what you type now is saved here and sent to no model; /fork makes a child with it as its task, /cancel stops",
    );
  },
};

export const cancel: CommandSpec<"cancel"> = {
  name: "cancel",
  usage: "/cancel",
  help: "end capture without forking (the text stays)",
  parse: noArgs("cancel"),
  run(ctx) {
    const lines = ctx.capturing()?.length;
    if (lines === undefined) return ctx.complain("not capturing (/capture starts)");
    ctx.setMode("normal");
    ctx.say(`capture cancelled; the ${lines} captured line(s) stay visible and reach no model`);
  },
};

/** child-1, child-2, … unique among the living children of `parentId`. */
function defaultChildName(ctx: CommandContext, parentId: string): string {
  const taken = new Set(
    [...ctx.controller.state.agents.values()]
      .filter((a) => a.parent_id === parentId && a.state !== "dead")
      .map((a) => a.name),
  );
  let n = 1;
  while (taken.has(`child-${n}`)) n++;
  return `child-${n}`;
}

function parseFork(args: string[], _rest: string, usage: string): Parsed<"fork"> {
  let childName: string | undefined;
  let worktree = false;
  let at: number | undefined;
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--name" || arg === "-n") {
      const value = args[++i];
      if (value === undefined || !value.trim())
        return { error: `/fork: --name needs a value (${usage})` };
      childName = value;
    } else if (arg.startsWith("--name=")) {
      childName = arg.slice("--name=".length);
      if (!childName.trim()) return { error: `/fork: --name needs a value (${usage})` };
    } else if (arg === "--worktree" && words.length === 0) {
      worktree = true;
    } else if (arg === "--at" && words.length === 0) {
      const value = args[++i];
      if (value === undefined || !/^\d{1,9}$/.test(value) || Number(value) < 1)
        return { error: `/fork: --at needs a turn number (${usage})` };
      at = Number(value);
    } else if (arg === "--") {
      words.push(...args.slice(i + 1));
      break;
    } else if (arg.startsWith("--") && words.length === 0) {
      return { error: `/fork: unknown option ${arg} (${usage})` };
    } else {
      words.push(arg);
    }
  }
  const prompt = words.join(" ").trim();
  return {
    name: "fork",
    ...(childName !== undefined ? { childName } : {}),
    ...(prompt ? { prompt } : {}),
    ...(worktree ? { worktree } : {}),
    ...(at !== undefined ? { at } : {}),
  };
}

export const fork: CommandSpec<"fork"> = {
  name: "fork",
  usage: '/fork [--name NAME] [--worktree] [--at N] ["PROMPT"]',
  help: "new child (inherits the context; the captured text is its task); --worktree: in a git worktree of its own; --at N: a sibling with the conversation before turn N (and, with --worktree, that turn's files)",
  parse: parseFork,
  async run(ctx, command, typed) {
    const { db, config, controller } = ctx;
    const here = controller.state.currentId;
    const parent = ctx.current();
    if (!parent) return ctx.complain("no agent to fork from");
    if (command.at !== undefined) return branchAt(ctx, parent, command.at, command, typed);
    const name = command.childName ?? defaultChildName(ctx, here);
    const captured = ctx.capturing();
    const parts = captured ? [...captured] : [];
    if (command.prompt) parts.push(command.prompt);
    const prompt = parts.join("\n").trim();
    // Recorded first so the transcript reads "» /fork", then "↳ forked"; the captured task is
    // the child's first message, the parent's record names the child only.
    await ctx.record(here, typed, {
      name,
      ...(command.prompt ? { prompt: command.prompt } : {}),
      ...(captured ? { captured_lines: captured.length } : {}),
    });
    // --worktree: the child's own git worktree, made first, removed again if the fork fails.
    let isolated: { id: string; worktree: Awaited<ReturnType<typeof createWorktree>> } | undefined;
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
    if (captured) ctx.setMode("normal");
    controller.putAgent(child);
    await controller.view(child.id);
    await ctx.reply(
      here,
      prompt
        ? `forked ${displayName(child)} with its task; it is running`
        : `forked ${displayName(child)}: an idle child with this context; type its first message`,
    );
  },
};

/** `/fork --at N`: a sibling whose conversation (and, with --worktree, files) is before turn N. */
async function branchAt(
  ctx: CommandContext,
  agent: AgentRow,
  at: number,
  command: CommandOf<"fork">,
  typed: string,
): Promise<void> {
  const here = ctx.controller.state.currentId;
  return complainOn(ctx, RewindError, async () => {
    const branch = await branchAgent(ctx.db, ctx.config, agent, at, {
      ...(command.childName ? { name: command.childName } : {}),
      ...(command.prompt ? { prompt: command.prompt } : {}),
      worktree: command.worktree === true,
      maxFileBytes: (ctx.config.checkpoints ?? DEFAULT_CHECKPOINTS).maxFileBytes,
    });
    await ctx.record(here, typed, { branch: branch.id, at });
    ctx.controller.putAgent(branch);
    await ctx.controller.view(branch.id);
    await ctx.reply(
      here,
      `forked ${displayName(branch)} from before turn ${at}${
        command.prompt ? "; it is running" : ": type its first message"
      }`,
    );
  });
}

export const kill: CommandSpec<"kill"> = {
  name: "kill",
  usage: "/kill [AGENT]",
  help: "kill an agent and its descendants (default: this one)",
  parse: oneAgent("kill"),
  async run(ctx, command, typed) {
    const here = ctx.controller.state.currentId;
    const target = await commandTarget(ctx, command);
    if (!target) return;
    if (!target.parent_id) return ctx.complain("the root agent cannot be killed");
    await ctx.record(here, typed, { target: target.id });
    const killed = await killAgent(ctx.db, { targetId: target.id, byAgentId: null });
    if (killed.includes(here)) await ctx.controller.view(target.parent_id);
    await ctx.reply(
      here,
      `killed ${displayName(target)}${killed.length > 1 ? ` and ${killed.length - 1} descendant(s)` : ""}`,
    );
  },
};

/** Interrupts `target` and its descendants (they stay alive); one line says how many. */
export async function stopSubtree(
  ctx: Pick<CommandContext, "db">,
  target: AgentRow,
  answer: (text: string, level?: "info" | "error") => void | Promise<void>,
): Promise<void> {
  if (target.state === "dead") {
    return answer(`${displayName(target)} is dead: nothing to stop`, "error");
  }
  const n = (await interruptSubtree(ctx.db, target.id)).length;
  return answer(`stopped ${n} agent${n === 1 ? "" : "s"}${n === 0 ? ": none was running" : ""}`);
}

export const stop: CommandSpec<"stop"> = {
  name: "stop",
  usage: "/stop [AGENT]",
  help: "interrupt an agent and all its descendants; they stay alive (default: this one)",
  parse: oneAgent("stop"),
  async run(ctx, command, typed) {
    const here = ctx.controller.state.currentId;
    const target = await commandTarget(ctx, command);
    if (!target) return;
    await ctx.record(here, typed, { target: target.id });
    await stopSubtree(ctx, target, (text, level) => ctx.reply(here, text, level));
  },
};

export const send: CommandSpec<"send"> = {
  name: "send",
  usage: "/send AGENT MESSAGE",
  help: "mail from this agent",
  parse(args, _rest, usage) {
    if (args.length < 2) return { error: `/send needs an agent and a message (${usage})` };
    const [agent, ...words] = args;
    return { name: "send", agent: agent!, message: words.join(" ") };
  },
  async run(ctx, command, typed) {
    const { state } = ctx.controller;
    const here = state.currentId;
    if (ctx.current()?.state === "dead")
      return ctx.complain("this agent is dead: it sends no mail");
    const to = await ctx.resolve(command.agent);
    await ctx.record(here, typed, { to: to.id });
    const receipt = await sendMail(ctx.db, {
      treeId: state.rootId,
      fromId: here,
      toId: to.id,
      body: command.message,
      maxBytes: ctx.config.limits.maxMessageBytes,
    });
    await ctx.reply(here, `mail sent to ${displayName(to)}${receipt.woke ? " (it woke up)" : ""}`);
  },
};

export const wait: CommandSpec<"wait"> = {
  name: "wait",
  usage: "/wait TIMEOUT [AGENT…]",
  help: "this agent waits for mail (fan-in when agents are given)",
  parse(args, _rest, usage) {
    const [timeout, ...agents] = args;
    if (timeout === undefined) return { error: `/wait needs a timeout in seconds (${usage})` };
    const seconds = Number(timeout);
    if (!/^\d+(\.\d+)?$/.test(timeout) || seconds > WAIT_MAX_SECONDS) {
      return { error: `/wait: timeout must be 0-${WAIT_MAX_SECONDS} seconds, not "${timeout}"` };
    }
    return { name: "wait", timeoutSeconds: seconds, agents };
  },
  async run(ctx, command, typed) {
    const here = ctx.controller.state.currentId;
    const agent = ctx.current();
    if (agent && agent.state !== "idle") {
      return ctx.complain(`${displayName(agent)} is ${agent.state}; /wait needs it idle`);
    }
    const ids: string[] = [];
    for (const ref of command.agents) ids.push((await ctx.resolve(ref)).id);
    await ctx.record(here, typed, { from_agents: ids });
    await requestWait(
      ctx.db,
      here,
      { timeoutSeconds: command.timeoutSeconds, ...(ids.length ? { fromAgents: ids } : {}) },
      ctx.config.limits,
    );
  },
};

export const reap: CommandSpec<"reap"> = {
  name: "reap",
  usage: "/reap",
  help: "remove dead agents from navigation",
  parse: noArgs("reap"),
  async run(ctx, _command, typed) {
    const { state } = ctx.controller;
    const here = state.currentId;
    const all = [...state.agents.values()];
    const reaped = await reapDead(ctx.db, state.rootId);
    const reapedSet = new Set(reaped);
    const landing = reapedSet.has(here)
      ? (nearestLivingAncestor(
          all.map((a) => (reapedSet.has(a.id) ? { ...a, reaped_at: new Date() } : a)),
          here,
        ) ?? state.rootId)
      : here;
    ctx.controller.markReaped(reaped);
    if (landing !== here) await ctx.controller.view(landing);
    await ctx.record(landing, typed, { reaped });
    await ctx.reply(
      landing,
      reaped.length
        ? `reaped ${reaped.length} dead agent${reaped.length === 1 ? "" : "s"}; their history stays in the database`
        : "nothing to reap: no dead agents",
    );
  },
};

export const model: CommandSpec<"model"> = {
  name: "model",
  usage: "/model NAME",
  help: "set this agent's model (Tab completes from the server's list)",
  parse: (args, _rest, usage) =>
    args.length !== 1
      ? { error: `/model needs one model name (${usage})` }
      : { name: "model", model: args[0]! },
  async run(ctx, command, typed) {
    const here = ctx.controller.state.currentId;
    const rows = await ctx.db.execute(
      sql`update agents set model = ${command.model} where id = ${here} and state <> 'dead' returning id`,
    );
    if (rows.rows.length === 0) return ctx.complain("this agent is dead; its model stays");
    await ctx.record(here, typed, { model: command.model });
    await ctx.reply(here, `model of this agent set to ${command.model}`);
  },
};
