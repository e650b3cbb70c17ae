// /approve and /deny: answering a tool call that waits for the person.
import { answerApproval, describeAnswer } from "../../approvals/approvals.js";
import type { CommandContext, CommandSpec } from "./types.js";

/** An approval request's number as typed ("12" or "#12"). */
function requestId(arg: string): number | undefined {
  return /^#?\d{1,15}$/.test(arg) ? Number(arg.replace("#", "")) : undefined;
}

/** The request /approve and /deny answer by default: the viewed agent's oldest, else the tree's. */
function defaultRequest(ctx: CommandContext) {
  const { state } = ctx.controller;
  return state.approvals.find((a) => a.agent_id === state.currentId) ?? state.approvals[0];
}

/** Answers request `id`; throws when it was answered first elsewhere (the caller says so). */
export async function answerRequest(
  ctx: Pick<CommandContext, "db" | "controller" | "say" | "ui">,
  id: number,
  allow: boolean,
  how: { tree?: boolean; reason?: string } = {},
): Promise<void> {
  const { state } = ctx.controller;
  const row = await answerApproval(
    ctx.db,
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
  ctx.controller.refreshApprovals();
  // The asking agent's transcript shows the answer; elsewhere a notice says what happened.
  if (row.agent_id !== state.currentId) ctx.say(describeAnswer(row));
  ctx.ui.onChange();
}

export const approve: CommandSpec<"approve"> = {
  name: "approve",
  usage: "/approve [ID] [--tree]",
  help: "allow a call waiting for approval (default: the oldest here; --tree: its pattern, for the tree)",
  parse(args, _rest, usage) {
    const tree = args.includes("--tree");
    const rest = args.filter((a) => a !== "--tree");
    const id = rest[0] === undefined ? undefined : requestId(rest[0]);
    if (rest.length > 1 || (rest[0] !== undefined && id === undefined)) {
      return { error: `/approve takes a request number and --tree (${usage})` };
    }
    return { name: "approve", tree, ...(id !== undefined ? { id } : {}) };
  },
  async run(ctx, command) {
    const id = command.id ?? defaultRequest(ctx)?.id;
    if (id === undefined) return ctx.complain("no tool call is waiting for approval");
    await answerRequest(ctx, id, true, { tree: command.tree });
  },
};

export const deny: CommandSpec<"deny"> = {
  name: "deny",
  usage: "/deny [ID] [REASON…]",
  help: "deny a call waiting for approval; the model reads the reason",
  parse(args) {
    const [first, ...words] = args;
    const id = first === undefined ? undefined : requestId(first);
    const reason = (id === undefined ? args : words).join(" ").trim();
    return { name: "deny", ...(id !== undefined ? { id } : {}), ...(reason ? { reason } : {}) };
  },
  async run(ctx, command) {
    const id = command.id ?? defaultRequest(ctx)?.id;
    if (id === undefined) return ctx.complain("no tool call is waiting for approval");
    await answerRequest(ctx, id, false, command.reason ? { reason: command.reason } : {});
  },
};
