// `warren rewind AGENT --list | --to N [--files-only | --conversation-only] [--yes]` (issue 43,
// SPEC §11): an agent's turns, and undoing turn N with everything after it.
import { getAgent } from "../agents/refs.js";
import {
  listTurns,
  notUndone,
  findTurn,
  rewindAgent,
  RewindError,
  type RewindMode,
  type TurnInfo,
} from "../agents/rewind.js";
import { DEFAULT_CHECKPOINTS, loadConfig } from "../config/config.js";
import type { Db } from "../db/client.js";
import { interruptAgent } from "../runtime/interrupt.js";
import { notUndoneLines, rewindLine, turnLine } from "../agents/rewind-lines.js";
import { shownName } from "../text/format.js";
import {
  CliError,
  expectPositionals,
  parseCommandArgs,
  UsageError,
  type RunCommand,
} from "./command.js";
import { resolveAgent, withDatabase } from "./scope.js";

/** How long `--yes` waits for an interrupted agent to stop. */
const STOP_WAIT_MS = 30_000;

function turnJson(t: TurnInfo) {
  return {
    turn: t.turn,
    start_event: t.startEvent,
    started_by: t.startedBy,
    text: t.text,
    at: t.at.toISOString(),
    rewound: t.rewound,
    tokens_in: t.tokensIn,
    tokens_out: t.tokensOut,
    checkpoint: t.checkpoint
      ? {
          ref: t.checkpoint.ref,
          commit: t.checkpoint.commit_sha,
          store_key: t.checkpoint.store_key,
          files: t.checkpoint.files,
          skipped: t.checkpoint.skipped,
        }
      : null,
  };
}

async function waitStopped(db: Db, agentId: string): Promise<void> {
  const deadline = Date.now() + STOP_WAIT_MS;
  while (Date.now() < deadline) {
    const row = await getAgent(db, agentId);
    if (!row || (row.state !== "running" && row.state !== "waiting")) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new CliError(
    "the agent did not stop within 30 s (is a worker running it?); nothing rewound",
  );
}

export const runRewind: RunCommand = async (args, io) => {
  const { values, positionals } = parseCommandArgs("rewind", {
    args,
    allowPositionals: true,
    options: {
      tree: { type: "string" },
      list: { type: "boolean" },
      json: { type: "boolean" },
      to: { type: "string" },
      "files-only": { type: "boolean" },
      "conversation-only": { type: "boolean" },
      yes: { type: "boolean", short: "y" },
    },
  });
  expectPositionals(positionals, "rewind", { required: ["AGENT"] });
  if (values.list === (values.to !== undefined)) {
    throw new UsageError("give either --list or --to N", "rewind");
  }
  if (values["files-only"] && values["conversation-only"]) {
    throw new UsageError("--files-only and --conversation-only exclude each other", "rewind");
  }
  const n = values.to === undefined ? undefined : Number(values.to);
  if (n !== undefined && (!Number.isInteger(n) || n < 1)) {
    throw new UsageError(`--to takes a turn number as listed, got "${values.to}"`, "rewind");
  }
  const mode: RewindMode = values["files-only"]
    ? "files"
    : values["conversation-only"]
      ? "conversation"
      : "both";
  const settings = loadConfig(io.env).checkpoints ?? DEFAULT_CHECKPOINTS;
  let asked = false;
  await withDatabase(io.env, async (db) => {
    let agent = await resolveAgent(db, positionals[0]!, values.tree);
    if (n === undefined) {
      const turns = await listTurns(db, agent.id);
      if (values.json) io.out(JSON.stringify(turns.map(turnJson)));
      else if (turns.length === 0) io.out(`${shownName(agent)} has no turns`);
      else for (const t of turns) io.out(turnLine(t));
      return;
    }
    try {
      const turn = await findTurn(db, agent.id, n);
      if (!values.yes) {
        const what =
          mode === "files"
            ? "its files"
            : mode === "conversation"
              ? "its conversation"
              : "its files and conversation";
        const lines = [
          `rewind ${shownName(agent)} to before turn ${n} (${what}); run again with --yes to do it`,
          ...notUndoneLines(await notUndone(db, agent.id, turn.startEvent)),
        ];
        if (agent.state === "running" || agent.state === "waiting") {
          lines.push(`${shownName(agent)} is ${agent.state}: --yes interrupts it first`);
        }
        // Every line (a CliError would show only its first): what is not undone is the point.
        for (const line of lines) io.err(`warren: ${line}`);
        asked = true;
        return;
      }
      if (agent.state === "running" || agent.state === "waiting") {
        await interruptAgent(db, agent.id);
        await waitStopped(db, agent.id);
        agent = (await getAgent(db, agent.id)) ?? agent;
      }
      const done = await rewindAgent(db, agent, n, mode, {
        maxFileBytes: settings.maxFileBytes,
        env: io.env,
      });
      io.out(rewindLine(shownName(agent), n, done));
      for (const line of notUndoneLines(done.notUndone)) io.out(line);
    } catch (err) {
      if (err instanceof RewindError) throw new CliError(err.message);
      throw err;
    }
  });
  // Without --yes nothing was done: exit 1, as a refusal.
  return asked ? 1 : 0;
};
