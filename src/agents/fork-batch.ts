// The fork calls of one response in one statement (issue 15). A response of 100 forks ran 100
// statements, each taking the root's lock and committing on its own, one after another; the
// children started one lock-hold apart. Calls made in the same turn of the event loop
// (runToolCalls starts a response's calls together) are gathered here and forked by one
// runForks (tree.ts): one lock, one commit, one round trip, each call with its own result or
// refusal as it would have had alone.
import type { Db } from "../db/client.js";
import type { ResultStamp } from "./event-keys.js";
import type { Limits } from "./limits.js";
import { lookalikeRefusals } from "./names.js";
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

/** A call and the ones that repeat it (its key again: a model that sent one call twice). */
interface Gathered extends Call {
  repeats: Call[];
}

interface Batch {
  db: Db;
  parentId: string;
  shared: SharedForkOptions;
  limits: Limits;
  calls: Gathered[];
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
  return new Promise((resolve, reject) => {
    // The batch forks a key once (the migration refuses it twice): a repeat gets the first's result.
    const first = batch.calls.find((c) => c.fork.record?.key === record.key);
    if (first) first.repeats.push({ fork, resolve, reject });
    else batch.calls.push({ fork, resolve, reject, repeats: [] });
  });
}

async function runBatch(batch: Batch): Promise<void> {
  let calls: Gathered[];
  let rows: BatchRow[];
  try {
    // A name that passes for another agent's of the tree (names.ts) is refused alone; the others fork.
    const refusals = await lookalikeRefusals(
      batch.db,
      batch.parentId,
      batch.calls.map((c) => c.fork.name),
    );
    calls = batch.calls.filter((call, i) => {
      const refused = refusals[i];
      if (refused) settle(call, { err: refused });
      return !refused;
    });
    if (calls.length === 0) return;
    const forks = calls.map((c) => c.fork);
    rows = await runForks(batch.db, batch.parentId, batch.shared, batch.limits, forks);
  } catch (err) {
    // The whole statement failed (the lease lost, the database away): each call fails or
    // retries with it (commitOnce), as it would have alone.
    for (const call of batch.calls) settle(call, { err });
    return;
  }
  const byOrd = new Map(rows.map((row) => [row.ord, row]));
  calls.forEach((call, i) => {
    const row = byOrd.get(i + 1);
    try {
      // Every fork returns a row; a call without one would wait for ever.
      if (!row) throw new Error("the fork batch returned no row for a call");
      settle(call, { result: resultOf(batch, call.fork, row) });
    } catch (err) {
      settle(call, { err });
    }
  });
}

/** Settles a gathered call and its repeats alike. */
function settle(call: Gathered, outcome: { result: ForkResult } | { err: unknown }): void {
  for (const c of [call, ...call.repeats]) {
    if ("result" in outcome) c.resolve(outcome.result);
    else c.reject(outcome.err);
  }
}

function resultOf(batch: Batch, fork: CheckedFork, row: BatchRow): ForkResult {
  if (row.recorded) return { eventId: Number(row.event_id), content: row.result_text! };
  return forkMade(batch.parentId, fork.name, batch.shared, batch.limits, row).result!;
}
