// openFeed: the live feed of one tree. One LISTEN on the tree's channel however many agents (and a
// feed_watchers row, so the tree's writes NOTIFY); hints (`a:`, `e:`, `i:`, `s:`) are collected
// for a few ms, then the rows are read in batches and handed to subscribers in the order they
// arrived. Stream hints that carry their text (`d:`, `w:`, see stream-hints.ts) need no read:
// delivered at once when nothing is queued before them. A failed read is retried with backoff
// (reported as a `connection` update); a subscriber never sees an exception.
import { randomUUID } from "node:crypto";
import { inArray } from "drizzle-orm";
import { agents } from "../agents/agents.sql.js";
import { events } from "../agents/events.sql.js";
import { RECONNECTED, UNLISTENED_POLL_MS, type Bus } from "../bus/bus.js";
import { treeChannel } from "../bus/channels.js";
import type { Db } from "../db/client.js";
import { describeDbError } from "../db/retry.js";
import { parseStreamHint, type StreamHint } from "./stream-hints.js";
import { applyDelta, applyEnd, mergeRow, type StreamState } from "./stream-state.js";
import { agentStreams } from "./streams.sql.js";
import {
  settleAfterWatch,
  unwatchTree,
  WATCH_REFRESH_MS,
  WATCH_TTL_MS,
  watchTree,
} from "./watchers.js";
import type { Feed, FeedUpdate } from "./types.js";

export interface FeedOptions {
  /** How long hints are collected before the rows are read (default 8 ms). */
  batchMs?: number;
  /** First retry delay after a failed read; doubles up to 5 s (default 100 ms). */
  retryMs?: number;
}

/**
 * One pending thing to read or tell, keyed so repeated hints collapse into one read. A `stream`
 * hint tells the stream's state as it is when the batch is read, read from its row first when
 * the state could not follow its hints (see stream-state.ts).
 */
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
  // The streams of watched agents as far as the hints went, and those whose row must be read.
  const streams = new Map<string, StreamState>();
  const unread = new Set<string>();
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

  // Hints that need a read wait a batch window, so that a burst of commits (a fork, a kill) costs
  // one read. (Reading the first hint of a quiet spell at once made twice the deliveries there;
  // the stream's text, where latency shows, needs no read: see onStreamHint.)
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

  const snapshot = (agentId: string): FeedUpdate[] => {
    const state = streams.get(agentId);
    if (!state) return [];
    const { text, reasoning, live } = state;
    return [{ type: "stream", stream: { agentId, text, reasoning, live } }];
  };

  /** Reads the stream's row with the next batch (and tells its state then). */
  const readStream = (agentId: string) => {
    unread.add(agentId);
    add({ kind: "stream", id: agentId });
  };

  /** A `d:`/`w:`/`s:` hint: applied now; told at once unless a batch is queued before it. */
  const onStreamHint = (hint: StreamHint) => {
    if (closed || !watched.has(hint.agentId)) return;
    if (hint.kind === "stream") return readStream(hint.agentId);
    const before = streams.get(hint.agentId);
    const step = hint.kind === "delta" ? applyDelta(before, hint) : applyEnd(before, hint.response);
    if (step.read) return readStream(hint.agentId);
    if (step.state === before || !step.state) return;
    streams.set(hint.agentId, step.state);
    if (pending.size === 0 && !draining) deliver(snapshot(hint.agentId));
    else add({ kind: "stream", id: hint.agentId });
  };

  async function drain(): Promise<void> {
    const batch = pending;
    pending = new Map();
    const reading = [...batch.values()].flatMap((h) =>
      h.kind === "stream" && unread.has(h.id) && watched.has(h.id) ? [h.id] : [],
    );
    reading.forEach((id) => unread.delete(id));
    try {
      const rows = await read(db, [...batch.values()], reading);
      for (const row of rows.streams) {
        if (!watched.has(row.agent_id)) continue;
        const { text, reasoning, live, response } = row;
        const merged = mergeRow(streams.get(row.agent_id), { text, reasoning, live, response });
        if (merged) streams.set(row.agent_id, merged);
      }
      const updates = rows.updates(snapshot);
      if (failures > 0) {
        failures = 0;
        updates.unshift({ type: "connection", warning: { kind: "outage-over" } });
      }
      deliver(updates);
    } catch (err) {
      // Keep every hint (newer ones after the older) and try again later.
      reading.forEach((id) => unread.add(id));
      for (const [key, hint] of pending) if (!batch.has(key)) batch.set(key, hint);
      pending = batch;
      if (failures++ === 0) {
        // Its cause without SQL text (a drizzle error's message is the whole query).
        deliver([{ type: "connection", warning: { kind: "outage", cause: describeDbError(err) } }]);
      }
    }
  }

  const unsubscribe = await bus.subscribe(treeChannel(treeId), (payload) => {
    const stream = parseStreamHint(payload);
    if (stream) return onStreamHint(stream);
    const hint = parseHint(payload);
    if (!hint) return;
    add(hint);
    // Hints may have been lost: what the streams' hints built may have gaps.
    if (hint.kind === "resync") watched.forEach(readStream);
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
      watched.forEach(readStream);
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
      for (const id of watched) {
        if (next.has(id)) continue;
        streams.delete(id);
        unread.delete(id);
      }
      watched = next;
      // Publishers write only watched agents' streams: register the new set (in order, so the
      // last one wins), then fetch what a newly watched agent has streamed so far.
      registering = registering
        .then(() => watchTree(db, watcherId, treeId, [...watched]))
        .catch(() => undefined) // the refresh re-registers; the read path reports trouble
        .then(() => added.forEach((id) => watched.has(id) && readStream(id)));
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

/**
 * Reads the rows behind a batch of hints (the stream rows of `streamIds` only); `updates` then
 * builds the updates in hint order, a stream's from its state once the rows are merged in.
 */
async function read(db: Db, hints: Hint[], streamIds: string[]) {
  const ids = (kind: Hint["kind"]) =>
    hints.flatMap((h) => (h.kind === kind ? [(h as { id: string | number }).id] : []));
  const agentIds = ids("agent") as string[];
  const eventIds = ids("event") as number[];
  const [agentRows, eventRows, streamRows] = await Promise.all([
    agentIds.length ? db.select().from(agents).where(inArray(agents.id, agentIds)) : [],
    eventIds.length ? db.select().from(events).where(inArray(events.id, eventIds)) : [],
    streamIds.length
      ? db.select().from(agentStreams).where(inArray(agentStreams.agent_id, streamIds))
      : [],
  ]);
  const agentById = new Map(agentRows.map((a) => [a.id, a]));
  const eventById = new Map(eventRows.map((e) => [e.id, e]));
  const updates = (stream: (agentId: string) => FeedUpdate[]): FeedUpdate[] => {
    const out: FeedUpdate[] = [];
    for (const hint of hints) {
      switch (hint.kind) {
        case "agent": {
          const agent = agentById.get(hint.id);
          if (agent) out.push({ type: "agent", agent });
          break;
        }
        case "event": {
          const event = eventById.get(hint.id);
          if (event) out.push({ type: "event", event });
          break;
        }
        case "stream":
          out.push(...stream(hint.id));
          break;
        case "input":
          out.push({ type: "input", agentId: hint.id });
          break;
        case "resync":
          out.push({ type: "resync" });
          break;
      }
    }
    return out;
  };
  return { streams: streamRows, updates };
}
