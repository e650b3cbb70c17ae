// The fork calls of one response in one statement (issue 15). A response of 100 forks ran 100
// warren_fork statements, each taking the root's lock and committing on its own, one after
// another; the children started one lock-hold apart. Calls made in the same turn of the event
// loop (runToolCalls starts a response's calls together) are gathered here and forked by one
// warren_fork_batch (migrations/0015_fork_batch.sql): one lock, one commit, one round trip, each
// call with its own result or refusal as warren_fork would give it.
import type { Db } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import { WORK_CHANNEL } from "../bus/channels.js";
import type { ResultStamp } from "./event-keys.js";
import type { Limits } from "./limits.js";
import {
  checkedFork,
  contextMode,
  forkMade,
  forkResultData,
  type ForkOptions,
  type ForkRow,
} from "./tree.js";

/** A fork call's `tool_result`: made by this call, or by an earlier attempt whose reply was lost. */
export interface ForkResult {
  eventId: number;
  content: string;
}

type Options = ForkOptions & { leaseOwner?: string; treeId?: string };

interface Call {
  options: Options;
  /** As checkedFork stores them. */
  name: string;
  prompt: string | null;
  record: ResultStamp;
  resolve: (result: ForkResult) => void;
  reject: (err: unknown) => void;
}

interface Batch {
  db: Db;
  parentId: string;
  limits: Limits;
  calls: Call[];
}

/** At most this many forks hold the root's lock in one statement. */
const MAX_BATCH = 128;

/** Batches gathering, by parent, lease and epoch: a stale worker's calls never join a new one's. */
const gathering = new Map<string, Batch>();

/**
 * Forks a child for a fork tool call and records the call's result, as forkAgentIn with a
 * ResultStamp does, together with the calls the same parent makes in this turn of the event loop.
 * A call whose result an earlier attempt recorded gets that result, and forks nothing.
 */
export function forkCall(
  db: Db,
  parentId: string,
  options: Options,
  limits: Limits,
  record: ResultStamp,
): Promise<ForkResult> {
  const { name, prompt } = checkedFork(parentId, options);
  const key = `${parentId}\u0000${options.leaseOwner ?? ""}\u0000${record.epoch ?? ""}`;
  let batch = gathering.get(key);
  if (!batch || batch.calls.length >= MAX_BATCH || batch.db !== db || batch.limits !== limits) {
    batch = { db, parentId, limits, calls: [] };
    gathering.set(key, batch);
    const started = batch;
    // After this turn's promise callbacks: every call of the response has joined by then.
    setImmediate(() => {
      if (gathering.get(key) === started) gathering.delete(key);
      void runBatch(started);
    });
  }
  return new Promise((resolve, reject) =>
    batch.calls.push({ options, name, prompt, record, resolve, reject }),
  );
}

async function runBatch(batch: Batch): Promise<void> {
  const { calls } = batch;
  let rows: BatchRow[];
  try {
    rows = await runPrepared<BatchRow>(batch.db, FORK_BATCH, batchValues(batch));
  } catch (err) {
    // The whole statement failed (the lease lost, the database away): each call fails or
    // retries with it (commitOnce), as it would have alone.
    for (const call of calls) call.reject(err);
    return;
  }
  const answered = new Set<number>();
  for (const row of rows) {
    const call = calls[row.ord - 1]!;
    answered.add(row.ord);
    try {
      call.resolve(resultOf(batch, call, row));
    } catch (err) {
      call.reject(err);
    }
  }
  // Every item returns a row; a call without one would wait for ever.
  calls.forEach((call, i) => {
    if (!answered.has(i + 1)) call.reject(new Error("the fork batch returned no row for a call"));
  });
}

function resultOf(batch: Batch, call: Call, row: BatchRow): ForkResult {
  if (row.recorded) return { eventId: Number(row.event_id), content: row.result_text! };
  const made = forkMade(batch.parentId, call.name, call.options, batch.limits, row);
  return made.result!;
}

function batchValues(batch: Batch): unknown[] {
  const [first] = batch.calls;
  const items = batch.calls.map(({ options, name, prompt, record }) => {
    return {
      name,
      prompt,
      system_prompt: options.systemPrompt ?? null,
      model: options.model ?? null,
      profile: options.profile ?? null,
      cwd: options.cwd ?? null,
      budget: options.budget ?? {},
      context: contextMode(options),
      cutoff: options.inheritUntilEvent ?? null,
      policy: options.policy ?? [],
      key: record.key,
      data: forkResultData(record),
    };
  });
  return [
    batch.parentId,
    first!.options.treeId ?? null,
    batch.limits.maxChildren,
    batch.limits.maxAgentsPerTree,
    batch.limits.maxDepth,
    first!.options.leaseOwner ?? null,
    first!.record.epoch,
    JSON.stringify(items),
  ];
}

type BatchRow = ForkRow & { ord: number; recorded: boolean };

/**
 * $1 parent, $2 tree (null: the parent's), $3 max children, $4 max living agents, $5 max depth,
 * $6 lease owner (null: none checked), $7 epoch, $8 the calls (see the migration).
 */
const FORK_BATCH: Prepared = {
  name: "warren_fork_batch",
  text: `select * from warren_fork_batch($1::uuid, $2::uuid, $3::int, $4::int, $5::int, $6::text,
           $7::bigint, $8::jsonb, '${WORK_CHANNEL}')`,
};
