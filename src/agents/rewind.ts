// Rewinding an agent (issue 43, SPEC §11): its turns as listed, and undoing turn N with everything
// after it. Files go back to the checkpoint taken before the turn (an idempotent restore, so a
// rewind that crashed half way is finished by running it again); the conversation goes back to
// before the turn in one transaction: the later events are kept, marked `rewound_at`, and left
// out of every request (pass-read.ts, context.ts, resume.ts). Mail sent and children forked are
// not undone.
import { sql } from "drizzle-orm";
import type { Db, Queryable } from "../db/client.js";
import type { AgentRow } from "./agents.sql.js";
import type { CheckpointRow } from "./checkpoints.sql.js";
import { restoreTree, type Restored } from "./checkpoint-git.js";
import { storeRestore } from "./checkpoint-store.js";
import {
  agentDir,
  checkpointRepository,
  checkpointsOf,
  vaultOf,
  type CheckpointOptions,
} from "./checkpoints.js";

/** Steps a test can make fail, as a crash would stop there (tests only). */
export const rewindTestHooks: {
  /** Between removing the files created since and writing the checkpoint's back. */
  afterRemove?: () => void | Promise<void>;
  /** After the files, before the conversation's transaction. */
  afterFiles?: () => void | Promise<void>;
} = {};

export class RewindError extends Error {
  override name = "RewindError";
}

/** One turn of an agent, as `warren rewind --list` and `/rewind` show it. */
export interface TurnInfo {
  /** Its number: turns are counted over the whole transcript, rewound ones included, so a
   * number keeps meaning the same turn after a rewind. */
  turn: number;
  /** The `user` or `mail_in` event that started it. */
  startEvent: number;
  startedBy: "user" | "mail_in";
  /** The start of the message that started it. */
  text: string;
  at: Date;
  rewound: boolean;
  tokensIn: number;
  tokensOut: number;
  /** Its checkpoint's row (none: it was offered no tool that changes files). */
  checkpoint: CheckpointRow | undefined;
}

// A turn starts at a `user` or `mail_in` event that follows anything but another one (mail taken
// in together starts one turn). Numbered over every event, rewound or not.
const MARKED = (agentId: string) => sql`
    select id, kind, left(content, 200) as text, created_at, rewound_at, data,
           kind in ('user', 'mail_in')
             and coalesce(lag(kind) over (order by id) not in ('user', 'mail_in'), true) as starts
      from events
     where agent_id = ${agentId}::uuid
       and kind in ('user', 'mail_in', 'assistant', 'tool_result', 'interrupted', 'error')`;

const TURNS = (agentId: string) => sql`
  with d as (${MARKED(agentId)}), t as (
    select *, sum(starts::int) over (order by id) as turn from d
  )
  select turn,
         min(id) filter (where starts) as start_event,
         min(kind) filter (where starts) as started_by,
         min(text) filter (where starts) as text,
         min(created_at) filter (where starts) as at,
         bool_or(rewound_at is not null) filter (where starts) as rewound,
         coalesce(sum((data->'usage'->>'inputTokens')::bigint)
                    filter (where kind = 'assistant'), 0) as tokens_in,
         coalesce(sum((data->'usage'->>'outputTokens')::bigint)
                    filter (where kind = 'assistant'), 0) as tokens_out
    from t where turn > 0
   group by turn order by turn`;

/** The event that started the agent's latest turn, numbered as listTurns numbers them. */
export async function latestTurnStart(q: Queryable, agentId: string): Promise<number | undefined> {
  const rows = await q.execute<{ id: string | null }>(
    sql`with d as (${MARKED(agentId)}) select max(id) as id from d where starts`,
  );
  const id = rows.rows[0]?.id;
  return id === null || id === undefined ? undefined : Number(id);
}

/** Every turn of the agent, oldest first, rewound ones included (marked). */
export async function listTurns(q: Queryable, agentId: string): Promise<TurnInfo[]> {
  const [rows, checkpoints] = await Promise.all([
    q.execute<{
      turn: string;
      start_event: string;
      started_by: "user" | "mail_in";
      text: string;
      at: string | Date;
      rewound: boolean;
      tokens_in: string;
      tokens_out: string;
    }>(TURNS(agentId)),
    checkpointsOf(q, agentId),
  ]);
  const byStart = new Map(checkpoints.map((c) => [c.start_event, c]));
  return rows.rows.map((r) => ({
    turn: Number(r.turn),
    startEvent: Number(r.start_event),
    startedBy: r.started_by,
    text: r.text,
    at: new Date(r.at),
    rewound: r.rewound,
    tokensIn: Number(r.tokens_in),
    tokensOut: Number(r.tokens_out),
    checkpoint: byStart.get(Number(r.start_event)),
  }));
}

/** What a rewind does not undo: mail the turns sent, children they forked. */
export interface NotUndone {
  mail: { to: string; text: string }[];
  forks: string[];
}

export async function notUndone(q: Queryable, agentId: string, from: number): Promise<NotUndone> {
  const rows = await q.execute<{
    kind: string;
    content: string;
    data: Record<string, unknown>;
  }>(sql`
    select kind, left(content, 120) as content, data from events
     where agent_id = ${agentId}::uuid and id >= ${from} and kind in ('mail_out', 'fork')
     order by id`);
  const out: NotUndone = { mail: [], forks: [] };
  for (const r of rows.rows) {
    if (r.kind === "fork") out.forks.push(r.content);
    else out.mail.push({ to: String(r.data?.to_name ?? r.data?.to ?? "?"), text: r.content });
  }
  return out;
}

export type RewindMode = "both" | "files" | "conversation";

export interface RewindResult {
  turn: TurnInfo;
  /** The files restored (undefined: the files were not asked for). */
  files?: Restored & { checkpoint: CheckpointRow | undefined; skipped: string[] };
  /** The events marked rewound now (0: a second run, already done). */
  rewoundEvents?: number;
  notUndone: NotUndone;
}

/** The agent's turn `n` (as listed), or a one-line error naming the turns there are. */
export async function findTurn(q: Queryable, agentId: string, n: number): Promise<TurnInfo> {
  const turns = await listTurns(q, agentId);
  const turn = turns.find((t) => t.turn === n);
  if (!turn) {
    const live = turns.filter((t) => !t.rewound).map((t) => t.turn);
    const range = live.length ? `its turns are ${live.join(", ")}` : "it has no turns";
    throw new RewindError(`no turn ${n}: ${range}`);
  }
  return turn;
}

/**
 * The checkpoint that holds the files as they were before `turn`: its own, else the first one
 * taken after it (the turns between were offered no tool that changes files). Undefined: no
 * turn since has changed files.
 */
function checkpointFor(checkpoints: CheckpointRow[], turn: TurnInfo): CheckpointRow | undefined {
  return checkpoints.find((c) => c.start_event >= turn.startEvent);
}

/** Puts the agent's files back to before `turn` (idempotent). */
export async function restoreFiles(
  q: Queryable,
  agent: AgentRow,
  turn: TurnInfo,
  options: CheckpointOptions,
): Promise<NonNullable<RewindResult["files"]>> {
  const checkpoint = checkpointFor(await checkpointsOf(q, agent.id), turn);
  if (!checkpoint) return { checkpoint, written: [], removed: [], skipped: [] };
  const dir = agentDir(agent);
  if (checkpoint.dir !== dir) {
    throw new RewindError(
      `the checkpoint is of ${checkpoint.dir}, and ${agent.name} works in ${dir} now`,
    );
  }
  let restored: Restored;
  const git = checkpoint.commit_sha ? await checkpointRepository(q, agent, dir) : undefined;
  if (git === null) throw new RewindError(`${dir} is no longer in the tree's git repository`);
  try {
    restored = git
      ? await restoreTree(
          git,
          await vaultOf(git, checkpoint.agent_id, options.env),
          checkpoint.commit_sha!,
          options.maxFileBytes,
          rewindTestHooks.afterRemove,
        )
      : storeRestore(dir, checkpoint.store_key!, options.maxFileBytes, options.env);
  } catch (err) {
    // The checkpoint gone (its refs deleted and pruned), or git failing: one line, and running
    // it again finishes what was done.
    throw err instanceof Error ? new RewindError(err.message) : err;
  }
  return { ...restored, checkpoint, skipped: checkpoint.skipped };
}

/**
 * Takes the agent's conversation back to before `turn`, in one transaction: its events from the
 * turn's start on are marked rewound and a `system` line (keyed, so a second run adds none) says
 * so. Refused while the agent runs or waits (interrupt it first). Returns the events marked.
 */
export async function rewindConversation(db: Db, agentId: string, turn: TurnInfo): Promise<number> {
  return db.transaction(async (tx) => {
    const locked = await tx.execute<{ state: string; name: string }>(
      sql`select state, name from agents where id = ${agentId}::uuid for update`,
    );
    const agent = locked.rows[0];
    if (!agent) throw new RewindError("no such agent");
    if (agent.state === "running" || agent.state === "waiting") {
      throw new RewindError(`${agent.name} is ${agent.state}: interrupt it first`);
    }
    const marked = await tx.execute(sql`
      update events set rewound_at = now()
       where agent_id = ${agentId}::uuid and id >= ${turn.startEvent} and rewound_at is null
         and key is distinct from ${`rw:${turn.startEvent}`}`);
    const count = marked.rowCount ?? 0;
    await tx.execute(sql`
      insert into events (agent_id, kind, content, data, key)
      values (${agentId}::uuid, 'system',
              ${`⟲ rewound to before turn ${turn.turn}: ${count} event${count === 1 ? "" : "s"} folded here, out of the conversation (warren log shows them)`},
              ${JSON.stringify({ rewind: { turn: turn.turn, from_event: turn.startEvent } })}::jsonb,
              ${`rw:${turn.startEvent}`})
      on conflict (agent_id, key) where key is not null do nothing`);
    return marked.rowCount ?? 0;
  });
}

/**
 * Rewinds `agent` to before its turn `n`: files first (idempotent), then the conversation (one
 * transaction). A crash between the two is finished by running it again. A turn rewound
 * already is refused once the agent has a later turn that is not (its files moved on).
 */
export async function rewindAgent(
  db: Db,
  agent: AgentRow,
  n: number,
  mode: RewindMode,
  options: CheckpointOptions,
): Promise<RewindResult> {
  const turns = await listTurns(db, agent.id);
  const turn = await findTurn(db, agent.id, n);
  if (turn.rewound && turns.some((t) => t.turn > n && !t.rewound)) {
    throw new RewindError(`turn ${n} was rewound already, and ${agent.name} has worked since`);
  }
  if (agent.state === "running" || agent.state === "waiting") {
    throw new RewindError(`${agent.name} is ${agent.state}: interrupt it first`);
  }
  const result: RewindResult = {
    turn,
    notUndone: await notUndone(db, agent.id, turn.startEvent),
  };
  if (mode !== "conversation") result.files = await restoreFiles(db, agent, turn, options);
  await rewindTestHooks.afterFiles?.();
  if (mode !== "files") result.rewoundEvents = await rewindConversation(db, agent.id, turn);
  return result;
}
