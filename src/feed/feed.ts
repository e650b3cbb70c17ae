// openFeed: the live feed of one tree. One LISTEN on the tree's channel however many agents (and a
// feed_watchers row, so the tree's writes NOTIFY); hints (`a:`, `e:`, `s:`, `i:`) are collected for
// a few ms, then the rows are read in batches and handed to subscribers in the order they arrived. A failed read is retried with backoff (reported as
// a `connection` update); a subscriber never sees an exception.
import { randomUUID } from "node:crypto";
import { inArray } from "drizzle-orm";
import { agents } from "../agents/agents.sql.js";
import { events } from "../agents/events.sql.js";
import { RECONNECTED, UNLISTENED_POLL_MS, type Bus } from "../bus/bus.js";
import { treeChannel } from "../bus/channels.js";
import type { Db } from "../db/client.js";
import { describeDbError } from "../db/retry.js";
import { agentStreams } from "./streams.sql.js";
import {
  settleAfterWatch,
  unwatchTree,
  WATCH_REFRESH_MS,
  WATCH_TTL_MS,
  watchTree,
} from "./watchers.js";
import type { Feed, FeedUpdate, StreamSnapshot } from "./types.js";

export interface FeedOptions {
  /** How long hints are collected before the rows are read (default 8 ms). */
  batchMs?: number;
  /** First retry delay after a failed read; doubles up to 5 s (default 100 ms). */
  retryMs?: number;
}

/** One pending thing to read or tell, keyed so repeated hints collapse into one read. */
type Hint =
  | { kind: "agent"; id: string }
  | { kind: "event"; id: number }
  | { kind: "stream"; id: string }
  | { kind: "input"; id: string }
  | { kind: "resync" };

function hintKey(hint: Hint): string {
  return hint.kind === "resync" ? "resync" : `${hint.kind}:${hint.id}`;
}

/** Parses a NOTIFY payload of the tree channel (see treeChannel); undefined for anything else. */
export function parseHint(payload: string): Hint | undefined {
  if (payload === RECONNECTED) return { kind: "resync" };
  const [tag, id, eventId] = payload.split(":");
  if (!id) return undefined;
  switch (tag) {
    case "a":
      return { kind: "agent", id };
    case "s":
      return { kind: "stream", id };
    case "i":
      return { kind: "input", id };
    case "e": {
      const n = Number(eventId);
      return Number.isSafeInteger(n) ? { kind: "event", id: n } : undefined;
    }
    default:
      return undefined;
  }
}

export async function openFeed(
  db: Db,
  bus: Bus,
  treeId: string,
  options: FeedOptions = {},
): Promise<Feed> {
  const batchMs = options.batchMs ?? 8;
  const retryMs = options.retryMs ?? 100;
  const listeners = new Set<(updates: FeedUpdate[]) => void>();
  let watched = new Set<string>();
  // Insertion order is the order hints arrived in; a repeated hint keeps its first place.
  let pending = new Map<string, Hint>();
  let timer: NodeJS.Timeout | undefined;
  let draining: Promise<void> | undefined;
  let failures = 0;
  let closed = false;

  const deliver = (updates: FeedUpdate[]) => {
    if (updates.length === 0 || closed) return;
    for (const listener of [...listeners]) {
      try {
        listener(updates);
      } catch {
        // A subscriber's bug must not stop the feed for the others.
      }
    }
  };

  const schedule = (delay = batchMs) => {
    if (closed || timer || draining) return;
    timer = setTimeout(() => {
      timer = undefined;
      draining = drain().finally(() => {
        draining = undefined;
        if (pending.size > 0) schedule(failures > 0 ? backoff(retryMs, failures) : batchMs);
      });
    }, delay);
  };

  const add = (hint: Hint) => {
    if (closed) return;
    const key = hintKey(hint);
    if (!pending.has(key)) pending.set(key, hint);
    schedule();
  };

  async function drain(): Promise<void> {
    const batch = pending;
    pending = new Map();
    try {
      const updates = await read(db, [...batch.values()], watched);
      if (failures > 0) {
        failures = 0;
        updates.unshift({ type: "connection", problem: undefined });
      }
      deliver(updates);
    } catch (err) {
      // Keep every hint (newer ones after the older) and try again later.
      for (const [key, hint] of pending) if (!batch.has(key)) batch.set(key, hint);
      pending = batch;
      if (failures++ === 0) {
        // One line without SQL text (a drizzle error's message is the whole query).
        const problem = `database unreachable: ${describeDbError(err)}; retrying`;
        deliver([{ type: "connection", problem }]);
      }
    }
  }

  const unsubscribe = await bus.subscribe(treeChannel(treeId), (payload) => {
    const hint = parseHint(payload);
    if (hint) add(hint);
  });
  // Triggers NOTIFY only watched trees: register, then let writes that missed it finish.
  const watcherId = randomUUID();
  try {
    await watchTree(db, watcherId, treeId);
    const settle = await settleAfterWatch(db);
    if (!settle.settled) {
      // A long transaction may commit rows without a hint after the first read: say so later.
      void settle
        .wait(30_000)
        .catch(() => false)
        .then(() => add({ kind: "resync" }));
    }
  } catch (err) {
    unsubscribe();
    throw err;
  }
  let registeredAt = Date.now();
  let registering: Promise<void> = Promise.resolve();
  const refresh = setInterval(() => {
    watchTree(db, watcherId, treeId, [...watched]).then(
      () => {
        // The row expired meanwhile (a long outage): hints may have been skipped.
        if (Date.now() - registeredAt > WATCH_TTL_MS) add({ kind: "resync" });
        registeredAt = Date.now();
      },
      () => undefined, // retried at the next tick; the read path reports the trouble
    );
  }, WATCH_REFRESH_MS);
  refresh.unref();
  // Without LISTEN (WARREN_LISTEN_URL=off, or its connection down) no hint comes: look again
  // every poll interval — the subscribers re-read what changed (agents, the viewed agent's tail).
  const poll = setInterval(() => {
    if (!bus.listening()) {
      add({ kind: "resync" });
      for (const id of watched) add({ kind: "stream", id });
    }
  }, UNLISTENED_POLL_MS);
  poll.unref();

  return {
    treeId,
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    watchStreams(agentIds) {
      const next = new Set(agentIds);
      const added = [...next].filter((id) => !watched.has(id));
      watched = next;
      // Publishers write only watched agents' streams: register the new set (in order, so the
      // last one wins), then fetch what a newly watched agent has streamed so far.
      registering = registering
        .then(() => watchTree(db, watcherId, treeId, [...watched]))
        .catch(() => undefined) // the refresh re-registers; the read path reports trouble
        .then(() => added.forEach((id) => add({ kind: "stream", id })));
    },
    async close() {
      closed = true;
      unsubscribe();
      clearTimeout(timer);
      clearInterval(refresh);
      clearInterval(poll);
      listeners.clear();
      await draining;
      await unwatchTree(db, watcherId).catch(() => undefined);
    },
  };
}

function backoff(base: number, failures: number): number {
  const ms = Math.min(5000, base * 2 ** Math.min(failures - 1, 6));
  return ms / 2 + Math.random() * (ms / 2);
}

/** Reads the rows behind a batch of hints and returns the updates in hint order. */
async function read(db: Db, hints: Hint[], watched: Set<string>): Promise<FeedUpdate[]> {
  const ids = (kind: Hint["kind"]) =>
    hints.flatMap((h) => (h.kind === kind ? [(h as { id: string | number }).id] : []));
  const agentIds = ids("agent") as string[];
  const eventIds = ids("event") as number[];
  const streamIds = (ids("stream") as string[]).filter((id) => watched.has(id));
  const [agentRows, eventRows, streamRows] = await Promise.all([
    agentIds.length ? db.select().from(agents).where(inArray(agents.id, agentIds)) : [],
    eventIds.length ? db.select().from(events).where(inArray(events.id, eventIds)) : [],
    streamIds.length
      ? db.select().from(agentStreams).where(inArray(agentStreams.agent_id, streamIds))
      : [],
  ]);
  const agentById = new Map(agentRows.map((a) => [a.id, a]));
  const eventById = new Map(eventRows.map((e) => [e.id, e]));
  const streamById = new Map(streamRows.map((s) => [s.agent_id, s]));
  const updates: FeedUpdate[] = [];
  for (const hint of hints) {
    switch (hint.kind) {
      case "agent": {
        const agent = agentById.get(hint.id);
        if (agent) updates.push({ type: "agent", agent });
        break;
      }
      case "event": {
        const event = eventById.get(hint.id);
        if (event) updates.push({ type: "event", event });
        break;
      }
      case "stream": {
        const row = streamById.get(hint.id);
        if (!row) break;
        const stream: StreamSnapshot = {
          agentId: row.agent_id,
          text: row.text,
          reasoning: row.reasoning,
          live: row.live,
        };
        updates.push({ type: "stream", stream });
        break;
      }
      case "input":
        updates.push({ type: "input", agentId: hint.id });
        break;
      case "resync":
        updates.push({ type: "resync" });
        break;
    }
  }
  return updates;
}
