// /diff, /merge and /discard: a worktree child's work, seen, merged into its parent or dropped.
import { displayName } from "../../agents/refs.js";
import { diffAgent, discardAgent, mergeAgent, WorktreeError } from "../../agents/worktree-ops.js";
import {
  commandTarget,
  complainOn,
  oneAgent,
  type CommandContext,
  type CommandOf,
  type CommandSpec,
} from "./types.js";

/** Diff output shown in the scrollback at most; the rest is named with the command that shows it. */
const DIFF_LINES = 200;

/** A worktree error is the person's one line; anything else goes on up. */
const guarded = (ctx: CommandContext, body: () => Promise<void>) =>
  complainOn(ctx, WorktreeError, body);

export const diff: CommandSpec<"diff"> = {
  name: "diff",
  usage: "/diff [AGENT]",
  help: "a worktree child's change against its base (default: this one)",
  parse: oneAgent("diff"),
  run: (ctx, command) =>
    guarded(ctx, async () => {
      const agent = await commandTarget(ctx, command);
      if (!agent) return;
      const text = (await diffAgent(agent)).replace(/\n$/, "");
      const lines = text.split("\n");
      const shown =
        lines.length > DIFF_LINES
          ? [
              ...lines.slice(0, DIFF_LINES),
              `… ${lines.length - DIFF_LINES} more lines (warren diff ${agent.id.slice(0, 8)})`,
            ]
          : lines;
      ctx.say(text ? shown.join("\n") : `${displayName(agent)} changed nothing`);
    }),
};

/** /merge and /discard: recorded on the viewed agent, answered below the record. */
async function finish(
  ctx: CommandContext,
  command: CommandOf<"merge" | "discard">,
  typed: string,
): Promise<void> {
  const agent = await commandTarget(ctx, command);
  if (!agent) return;
  if (command.name === "discard" && ctx.session.discardAsked !== agent.id) {
    ctx.session.discardAsked = agent.id;
    return ctx.say(
      `/discard removes ${displayName(agent)}'s worktree and branch with all its work; type /discard again to confirm`,
    );
  }
  ctx.session.discardAsked = undefined;
  const here = ctx.controller.state.currentId;
  await ctx.record(here, typed, { target: agent.id });
  const fresh = (await ctx.resolve(agent.id)) ?? agent;
  const done =
    command.name === "merge" ? await mergeAgent(ctx.db, fresh) : await discardAgent(ctx.db, fresh);
  await ctx.reply(here, done);
}

export const merge: CommandSpec<"merge"> = {
  name: "merge",
  usage: "/merge [AGENT]",
  help: "commit a worktree child's work and merge its branch into its parent's tree",
  parse: oneAgent("merge"),
  run: (ctx, command, typed) => guarded(ctx, () => finish(ctx, command, typed)),
};

export const discard: CommandSpec<"discard"> = {
  name: "discard",
  usage: "/discard [AGENT]",
  help: "remove a worktree child's worktree and branch (asks first)",
  parse: oneAgent("discard"),
  run: (ctx, command, typed) => guarded(ctx, () => finish(ctx, command, typed)),
};
