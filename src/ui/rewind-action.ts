// `/rewind` in the TUI (issue 43, SPEC §11): undoing one of the viewed agent's turns. A first
// `/rewind N [files|conversation]` says what it will do (and what it will not undo: mail sent,
// children forked; and that a running agent is interrupted first); the same command again does
// it. The rewound events stay in the scrollback, folded behind one line.
import type { AgentRow } from "../agents/agents.sql.js";
import { displayName } from "../agents/refs.js";
import {
  findTurn,
  notUndone,
  rewindAgent,
  RewindError,
  type RewindMode,
} from "../agents/rewind.js";
import { DEFAULT_CHECKPOINTS, type Config } from "../config/config.js";
import type { Db } from "../db/client.js";
import { getAgent } from "../agents/refs.js";
import { interruptAgent } from "../runtime/interrupt.js";
import { notUndoneLines, rewindLine } from "../agents/rewind-lines.js";

export interface RewindAsk {
  agentId: string;
  turn: number;
  mode: RewindMode;
}

const MODE_WORDS: Record<RewindMode, string> = {
  both: "files and conversation",
  files: "files only",
  conversation: "conversation only",
};

/** What a first `/rewind N` answers: what will happen, asking for the same command again. */
export async function rewindQuestion(db: Db, agent: AgentRow, ask: RewindAsk): Promise<string> {
  const turn = await findTurn(db, agent.id, ask.turn);
  const lines = [
    `/rewind ${ask.turn}: ${displayName(agent)} back to before turn ${ask.turn} (${MODE_WORDS[ask.mode]})`,
    ...notUndoneLines(await notUndone(db, agent.id, turn.startEvent)),
  ];
  if (agent.state === "running" || agent.state === "waiting") {
    lines.push(`${displayName(agent)} is ${agent.state}: it is interrupted first`);
  }
  lines.push("type the same /rewind again to do it");
  return lines.join("\n");
}

/** Does the rewind (interrupting a running agent first, and waiting up to 30 s for it). */
export async function rewindNow(
  db: Db,
  config: Config,
  agent: AgentRow,
  ask: RewindAsk,
): Promise<string> {
  let target = agent;
  if (target.state === "running" || target.state === "waiting") {
    await interruptAgent(db, target.id);
    const deadline = Date.now() + 30_000;
    while (target.state === "running" || target.state === "waiting") {
      if (Date.now() > deadline) {
        throw new RewindError(`${displayName(agent)} did not stop within 30 s; nothing rewound`);
      }
      await new Promise((r) => setTimeout(r, 200));
      target = (await getAgent(db, agent.id)) ?? target;
    }
  }
  const settings = config.checkpoints ?? DEFAULT_CHECKPOINTS;
  const done = await rewindAgent(db, target, ask.turn, ask.mode, {
    maxFileBytes: settings.maxFileBytes,
  });
  return [rewindLine(displayName(agent), ask.turn, done), ...notUndoneLines(done.notUndone)].join(
    "\n",
  );
}
