// The fork calls of one response in one statement (issue 15). A response of 100 forks ran 100
// statements, each taking the root's lock and committing on its own, one after another; the
// children started one lock-hold apart. Calls made in the same turn of the event loop
// (runToolCalls starts a response's calls together) are gathered here and forked by one
// runForks (tree.ts): one lock, one commit, one round trip, each call with its own result or
// refusal as it would have had alone.
import type { Db } from "../db/client.js";
import type { ResultStamp } from "./event-keys.js";
import type { Limits } from "./limits.js";
import {
  checkedFork,
  forkMade,
  runForks,
  type BatchRow,
  type CheckedFork,
  type ForkOptions,
  type SharedForkOptions,
} from "./tree.js";

/** A fork call's `tool_result`: made by this call, or by an earlier attempt whose reply was lost. */
export interface ForkResult {
  eventId: number;
  content: string;
}

interface Call {
  fork: CheckedFork;
  resolve: (result: ForkResult) => void;
  reject: (err: unknown) => void;
}

interface Batch {
  db: Db;
  parentId: string;
  shared: SharedForkOptions;
  limits: Limits;
  calls: Call[];
}

/** At most this many forks hold the root's lock in one statement. */
const MAX_BATCH = 128;

/** Batches gathering, by parent, lease and epoch: a stale worker's calls never join a new one's. */
const gathering = new Map<string, Batch>();

/**
 * Forks a child for a fork tool call and records the call's result, together with the calls the
 * same parent makes in this turn of the event loop. A call whose result an earlier attempt
 * recorded gets that result, and forks nothing.
 */
export function forkCall(
  db: Db,
  parentId: string,
  options: ForkOptions & SharedForkOptions,
  limits: Limits,
  record: ResultStamp,
): Promise<ForkResult> {
  const fork = checkedFork(parentId, options, record);
  const key = `${parentId}\u0000${options.leaseOwner ?? ""}\u0000${record.epoch ?? ""}`;
  let batch = gathering.get(key);
  if (!batch || batch.calls.length >= MAX_BATCH || batch.db !== db || batch.limits !== limits) {
    batch = { db, parentId, shared: options, limits, calls: [] };
    gathering.set(key, batch);
    const started = batch;
    // After this turn's promise callbacks: every call of the response has joined by then.
    setImmediate(() => {
      if (gathering.get(key) === started) gathering.delete(key);
      void runBatch(started);
    });
  }
  return new Promise((resolve, reject) => batch.calls.push({ fork, resolve, reject }));
}

async function runBatch(batch: Batch): Promise<void> {
  const { calls } = batch;
  let rows: BatchRow[];
  try {
    const forks = calls.map((c) => c.fork);
    rows = await runForks(batch.db, batch.parentId, batch.shared, batch.limits, forks);
  } catch (err) {
    // The whole statement failed (the lease lost, the database away): each call fails or
    // retries with it (commitOnce), as it would have alone.
    for (const call of calls) call.reject(err);
    return;
  }
  const byOrd = new Map(rows.map((row) => [row.ord, row]));
  calls.forEach((call, i) => {
    const row = byOrd.get(i + 1);
    // Every fork returns a row; a call without one would wait for ever.
    if (!row) return call.reject(new Error("the fork batch returned no row for a call"));
    try {
      call.resolve(resultOf(batch, call.fork, row));
    } catch (err) {
      call.reject(err);
    }
  });
}

function resultOf(batch: Batch, fork: CheckedFork, row: BatchRow): ForkResult {
  if (row.recorded) return { eventId: Number(row.event_id), content: row.result_text! };
  return forkMade(batch.parentId, fork.name, batch.shared, batch.limits, row).result!;
}
