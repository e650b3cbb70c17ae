// /rewind: the viewed agent's turns in a picker (rewind-picker.ts), then undoing one
// (docs/rewind.md). Typed directly, a first `/rewind N [files|conversation]` says what it will do
// and the same command again does it; the picker's confirmation runs it as that second one.
import { RewindError } from "../../agents/rewind.js";
import { WorktreeError } from "../../agents/worktree-ops.js";
import { displayName } from "../../agents/refs.js";
import { rewindNow, rewindQuestion } from "../rewind-action.js";
import type { CommandSpec, Parsed } from "./types.js";

function parseRewind(args: string[], _rest: string, usage: string): Parsed<"rewind"> {
  if (args.length === 0) return { name: "rewind", mode: "both" };
  const turn = Number(args[0]);
  const mode = args[1] === undefined ? "both" : args[1];
  if (!/^\d{1,9}$/.test(args[0]!) || turn < 1 || args.length > 2) {
    return { error: `/rewind takes a turn number and "files" or "conversation" (${usage})` };
  }
  if (mode !== "both" && mode !== "files" && mode !== "conversation") {
    return { error: `/rewind: "${mode}" is neither "files" nor "conversation" (${usage})` };
  }
  return { name: "rewind", turn, mode };
}

export const rewind: CommandSpec<"rewind"> = {
  name: "rewind",
  usage: "/rewind [N [files|conversation]]",
  help: "pick one of the agent's turns to undo with all after it (files and conversation, or one of them); /rewind N: type it twice",
  parse: parseRewind,
  async run(ctx, command, typed) {
    const here = ctx.controller.state.currentId;
    const asked = ctx.session.rewindAsked;
    ctx.session.rewindAsked = undefined;
    const target = ctx.current();
    if (!target) return ctx.complain("no agent to rewind");
    try {
      if (command.turn === undefined) return ctx.ui.rewind(target.id, displayName(target));
      const ask = { agentId: target.id, turn: command.turn, mode: command.mode };
      if (asked?.agentId !== ask.agentId || asked.turn !== ask.turn || asked.mode !== ask.mode) {
        ctx.session.rewindAsked = ask;
        return ctx.say(await rewindQuestion(ctx.db, target, ask));
      }
      // Recorded after: the command's own line is not one of the events it rewinds.
      const text = await rewindNow(ctx.db, ctx.config, target, ask);
      await ctx.record(here, typed, { turn: ask.turn, mode: ask.mode });
      await ctx.controller.view(target.id);
      return ctx.reply(here, text);
    } catch (err) {
      if (err instanceof RewindError || err instanceof WorktreeError)
        return ctx.complain(err.message);
      throw err;
    }
  },
};
