// Registering an open feed in feed_watchers, so the triggers and the stream publisher NOTIFY its
// tree (and only watched trees pay for NOTIFY). A row lives WATCH_TTL_MS unless refreshed. The
// hint triggers are enabled only while some feed is registered: registering and closing sync
// them in the same statement (migrations/0019_hints_when_watched.sql), and the runtime's
// schedulers turn off what a crashed feed left on (expireHints).
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { rootCause, withRetry } from "../db/retry.js";

export const WATCH_TTL_MS = 60_000;
export const WATCH_REFRESH_MS = 20_000;
/** How long opening a feed waits for transactions that may have missed its registration. */
const SETTLE_MS = 1_000;

/**
 * Registers (or re-registers) a feed with the agents whose streams it reads; returns once
 * committed. Streams of other agents are neither stored nor hinted, so a TUI's traffic follows
 * what it shows, not how many agents stream.
 */
export async function watchTree(
  db: Db,
  watcherId: string,
  treeId: string,
  streams: readonly string[] = [],
): Promise<void> {
  // Turning the hint triggers on waits for the tables' writers at most its lock timeout (55P03),
  // so that they never queue long behind it; it is tried again. Other errors are the caller's.
  await withRetry(
    () =>
      db.execute(sql`
        select warren_feed_watch(${watcherId}::uuid, ${treeId}::uuid, ${WATCH_TTL_MS / 1000},
                                 ${sql.param([...streams])}::uuid[])`),
    { retryable: tablesBusy, baseDelayMs: 20, maxDelayMs: 500, maxElapsedMs: 20_000 },
  );
}

/** Ends a feed's registration; with none left, the hint triggers go off (if the tables let them). */
export async function unwatchTree(db: Db, watcherId: string): Promise<void> {
  await db.execute(sql`select warren_feed_unwatch(${watcherId}::uuid)`);
}

/** How often each worker thread's scheduler looks for hint triggers a crashed feed left on. */
export const HINT_SWEEP_MS = 30_000;

/**
 * Turns the hint triggers off when they are on and no registration is live: a feed that crashed
 * left its row to expire, and with no other feed open nothing else would sync them
 * (migrations/0020_hints_expire.sql). A busy table leaves them on until the next sweep.
 */
export async function expireHints(db: Db): Promise<void> {
  try {
    await db.execute(sql`select warren_feed_expire()`);
  } catch (err) {
    if (!tablesBusy(err)) throw err;
  }
}

/** A lock wait that gave up at its timeout (SQLSTATE 55P03). */
function tablesBusy(err: unknown): boolean {
  return (rootCause(err) as { code?: unknown } | null)?.code === "55P03";
}

/**
 * After watchTree: a transaction that wrote rows of the tree before the registration committed
 * sent no hint, and may commit after the subscriber's first read. Resolves true once every
 * transaction running at registration has ended (within `ms`), false if some still runs.
 */
export async function settleAfterWatch(
  db: Db,
  ms = SETTLE_MS,
): Promise<{ settled: boolean; wait: (ms: number) => Promise<boolean> }> {
  const snap = await db.execute<{ snap: string }>(sql`select pg_current_snapshot()::text as snap`);
  const snapshot = snap.rows[0]!.snap;
  const wait = async (limit: number) => {
    const deadline = Date.now() + limit;
    while (true) {
      const running = await db.execute<{ n: number }>(sql`
        select count(*)::int as n from pg_snapshot_xip(${snapshot}::pg_snapshot) x
         where pg_xact_status(x) = 'in progress'`);
      if (running.rows[0]!.n === 0) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { settled: await wait(ms), wait };
}
