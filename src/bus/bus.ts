// The process's single LISTEN connection: channels are shared by reference count, so LISTEN
// connections never grow with agents; after a lost connection it reconnects with jittered
// backoff, re-LISTENs and tells every subscriber to re-check (something may have been missed).
// A bus may also be unable to listen (LISTEN off, or a listener that cannot connect): it says so
// through listening(), and those who wait on NOTIFYs re-check every UNLISTENED_POLL_MS meanwhile.
import * as pgListen from "pg-listen";
import type { Subscriber, Options } from "pg-listen";
import type pg from "pg";
import { sessionConfig, sessionLimits } from "../db/client.js";
import { describeDbError, shownError } from "../db/retry.js";
import { notice, type WarningSink } from "../db/warning.js";

type CreateSubscriber = (config: pg.ClientConfig, options: Options) => Subscriber;
// pg-listen is CommonJS with `exports.default`; under Node's ESM loader that sits one level down.
const pgListenModule = pgListen as unknown as {
  default: CreateSubscriber | { default: CreateSubscriber };
};
const createPostgresSubscriber: CreateSubscriber =
  typeof pgListenModule.default === "function"
    ? pgListenModule.default
    : pgListenModule.default.default;

export type Listener = (payload: string) => void;

/** Payload passed to listeners after a reconnect: "look again, a NOTIFY may have been lost". */
export const RECONNECTED = "reconnected";

/** How often waits and schedulers re-check while their bus cannot listen (instead of NOTIFY). */
export const UNLISTENED_POLL_MS = 1_000;

// A half-open connection (the peer or a middlebox went silent without closing) never errors by
// itself. pg-listen's check query every CHECK_MS has no timeout of its own: the client's
// query_timeout fails it, and pg-listen then reconnects. A reconnect into such a silence is
// bounded by CONNECT_TIMEOUT_MS; keepalive probes after KEEPALIVE_DELAY_MS instead of the OS's
// two hours, so a vanished peer also errors between checks. The session carries warren's usual
// server-side limits (SessionLimits in db/client.ts).
const CHECK_MS = 10_000;
const QUERY_TIMEOUT_MS = 5_000;
const CONNECT_TIMEOUT_MS = 5_000;
/** LISTEN/UNLISTENs sent and not yet answered, at most (see enqueue). */
const PIPELINE_DEPTH = 32;

export interface Bus {
  /**
   * Resolves once the LISTEN is active, so a check made afterwards cannot miss a NOTIFY; while
   * the bus cannot listen (see listening()) it resolves at once, and the listener is told
   * RECONNECTED when the bus starts listening.
   */
  subscribe(channel: string, listener: Listener): Promise<() => void>;
  /** Subscribers to several channels at once; one unsubscribe for all. */
  subscribeAll(channels: string[], listener: Listener): Promise<() => void>;
  /** How many channels this connection LISTENs to now. */
  channelCount(): number;
  /**
   * Whether NOTIFYs reach this process now: false with LISTEN off, when the listener could not
   * connect, and while it reconnects. Whoever sleeps until a NOTIFY must then re-check often.
   */
  listening(): boolean;
  /** Calls `watcher` whenever listening() changes; returns the unsubscribe. */
  onListeningChange(watcher: (listening: boolean) => void): () => void;
  close(): Promise<void>;
}

export interface BusOptions {
  /** Told of connection trouble (default: ignored). */
  onWarning?: WarningSink;
}

function backoff(attempt: number): number {
  const base = Math.min(5000, 100 * 2 ** Math.min(attempt, 6));
  return base / 2 + Math.random() * (base / 2);
}

/** subscribeAll on top of a bus's subscribe: every distinct channel, one unsubscribe for all. */
function subscribingAll(subscribe: Bus["subscribe"]): Bus["subscribeAll"] {
  return async (channels, listener) => {
    const offs = await Promise.all([...new Set(channels)].map((c) => subscribe(c, listener)));
    return () => offs.forEach((off) => off());
  };
}

const pollNote = `waits and claims re-check every ${UNLISTENED_POLL_MS / 1000} s`;

/**
 * A bus on the LISTEN connection `connectionString`, or with null a bus that never listens
 * (LISTEN off, e.g. behind PgBouncer in transaction mode). Never waits longer than
 * CONNECT_TIMEOUT_MS for the listener: one that cannot connect keeps retrying in the background.
 */
export async function createBus(
  connectionString: string | null,
  options: BusOptions = {},
): Promise<Bus> {
  const listeners = new Map<string, Set<Listener>>();
  const watchers = new Set<(listening: boolean) => void>();
  let listening = false;
  let closed = false;

  // Subscribers run inside the driver's socket handlers: one that throws must neither stop the
  // others nor escape as an uncaught exception (which would end the thread).
  const safely = (call: () => void) => {
    try {
      call();
    } catch (err) {
      options.onWarning?.(notice(`a notification subscriber failed: ${shownError(err)}`));
    }
  };
  const setListening = (now: boolean) => {
    if (now === listening) return;
    listening = now;
    for (const watcher of [...watchers]) safely(() => watcher(now));
  };
  const common = {
    channelCount: () => listeners.size,
    listening: () => listening,
    onListeningChange(watcher: (listening: boolean) => void) {
      watchers.add(watcher);
      return () => void watchers.delete(watcher);
    },
  };

  if (connectionString === null) {
    options.onWarning?.({ kind: "notifications-off", cause: "LISTEN is off", poll: pollNote });
    const subscribe = (channel: string, listener: Listener) => {
      const set = listeners.get(channel) ?? new Set<Listener>();
      listeners.set(channel, set);
      set.add(listener);
      return Promise.resolve(() => {
        if (set.delete(listener) && set.size === 0) listeners.delete(channel);
      });
    };
    return {
      ...common,
      subscribe,
      subscribeAll: subscribingAll(subscribe),
      async close() {
        listeners.clear();
        watchers.clear();
      },
    };
  }

  const subscriber: Subscriber = createPostgresSubscriber(
    {
      connectionString,
      application_name: "warren-listen",
      query_timeout: QUERY_TIMEOUT_MS,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      ...sessionConfig(sessionLimits({}, QUERY_TIMEOUT_MS)),
      // Queries are sent without waiting for the answer to the one before (pg's pipeline mode),
      // still run and answered in order: a fan-in's 100 LISTENs do not wait for each other.
      pipeline: true,
    } as pg.ClientConfig,
    {
      parse: (s: string) => s,
      serialize: (s: unknown) => String(s),
      retryInterval: backoff,
      retryLimit: Infinity,
      retryTimeout: 0, // never give up: a restarted Postgres comes back eventually
      paranoidChecking: CHECK_MS,
    },
  );
  // LISTEN/UNLISTEN run in the order asked (enqueue), so a quick unsubscribe+subscribe of one
  // channel is safe; `queue` settles once the last asked for (and so every one before it) has.
  let queue: Promise<unknown> = Promise.resolve();
  let connectedOnce = false;
  // Set when NOTIFYs may have been missed (a lost connection, a subscribe while not listening):
  // the next connect tells every subscriber RECONNECTED.
  let missed = false;

  const broadcast = (payload: string) => {
    for (const set of listeners.values()) {
      for (const listener of [...set]) safely(() => listener(payload));
    }
  };

  subscriber.events.on("notification", ({ channel, payload }) => {
    const set = listeners.get(channel);
    if (!set) return;
    for (const listener of [...set]) safely(() => listener(String(payload ?? "")));
  });
  subscriber.events.on("connected", () => {
    // A reconnect that completed after close(): end that connection too.
    if (closed) return void subscriber.close().catch(() => undefined);
    connectedOnce = true;
    setListening(true);
    if (missed) {
      missed = false;
      broadcast(RECONNECTED);
    }
  });
  subscriber.events.on("reconnect", () => {
    // pg-listen's reconnect loop never ends by itself (retryTimeout 0), not even on close(): a
    // throw here ends it (pg-listen reports it as an "error", ignored once closed).
    if (closed) throw new Error("the bus is closed");
    missed = true;
    setListening(false);
    // Before the first connection, the one "notifications unavailable" line said it all.
    if (connectedOnce) {
      options.onWarning?.({ kind: "outage", cause: "connection lost" });
    }
  });
  subscriber.events.on("error", () => {
    // Its reconnect loop carries on: part of the outage (the error's text is pg-listen's own).
    if (!closed) options.onWarning?.({ kind: "outage", cause: "connection lost" });
  });

  // A first connection that fails leaves the bus deaf, not the process stuck: pg-listen retries
  // it in the background (the failed client's "end" starts its reconnect loop).
  await subscriber.connect().catch((err: unknown) => {
    missed = true;
    options.onWarning?.({
      kind: "notifications-off",
      cause: `listener: ${describeDbError(err)}`,
      poll: pollNote,
    });
  });

  // LISTEN/UNLISTENs not yet sent, in order, and how many are sent but not yet answered.
  const unsent: (() => void)[] = [];
  let unanswered = 0;

  /** Sends one LISTEN/UNLISTEN once fewer than PIPELINE_DEPTH are unanswered; settles when done. */
  function send(op: () => Promise<unknown> | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const start = () => {
        unanswered++;
        let sent: Promise<unknown>;
        try {
          sent = Promise.resolve(op());
        } catch (err) {
          sent = Promise.reject(err);
        }
        // A failed LISTEN while disconnected is fine: pg-listen re-LISTENs every channel on
        // reconnect.
        void sent
          .catch(() => undefined)
          .then(() => {
            unanswered--;
            unsent.shift()?.();
            resolve();
          });
      };
      if (unanswered < PIPELINE_DEPTH && unsent.length === 0) start();
      else unsent.push(start);
    });
  }

  /**
   * Sends LISTEN/UNLISTENs in order, pipelined: the client sends a query without waiting for the
   * answer to the one before, up to PIPELINE_DEPTH at once, and they are answered in order. So a
   * fan-in's 100 LISTENs, and the subscriptions of agents starting together, do not take a round
   * trip each; the depth keeps a burst of 1,000 from running its waits' first checks all at once.
   */
  function enqueue(ops: (() => Promise<unknown> | undefined)[]): Promise<unknown> {
    queue = Promise.all(ops.map(send));
    return queue;
  }

  async function subscribeAll(channels: string[], listener: Listener): Promise<() => void> {
    const distinct = [...new Set(channels)];
    const first: string[] = [];
    for (const channel of distinct) {
      let set = listeners.get(channel);
      if (!set) {
        listeners.set(channel, (set = new Set()));
        first.push(channel);
      }
      set.add(listener);
    }
    await (first.length > 0 ? enqueue(first.map((c) => () => subscriber.listenTo(c))) : queue);
    // Not heard yet: whatever this subscriber checks now may be overtaken by a missed NOTIFY.
    if (!listening) missed = true;
    return () => {
      const last = distinct.filter((channel) => {
        const current = listeners.get(channel);
        if (!current?.delete(listener) || current.size > 0) return false;
        listeners.delete(channel);
        return true;
      });
      if (closed || last.length === 0) return;
      // Sent after the caller's continuation has run (setImmediate): a wait or claim that just got
      // its answer returns it without first writing an UNLISTEN. Checked when it is sent: a
      // channel subscribed again meanwhile stays LISTENed.
      setImmediate(() => {
        if (closed) return;
        void enqueue(
          last.map((c) => () => (listeners.has(c) ? undefined : subscriber.unlisten(c))),
        );
      });
    };
  }

  return {
    ...common,
    subscribe: (channel, listener) => subscribeAll([channel], listener),
    subscribeAll,
    async close() {
      closed = true;
      listeners.clear();
      watchers.clear();
      await subscriber.close().catch(() => undefined);
    },
  };
}
