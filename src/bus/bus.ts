// The process's single LISTEN connection: channels are shared by reference count, so LISTEN
// connections never grow with agents; after a lost connection it reconnects with jittered
// backoff, re-LISTENs and tells every subscriber to re-check (something may have been missed).
import * as pgListen from "pg-listen";
import type { Subscriber, Options } from "pg-listen";
import type pg from "pg";

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

export interface Bus {
  /** Resolves once the LISTEN is active, so a check made afterwards cannot miss a NOTIFY. */
  subscribe(channel: string, listener: Listener): Promise<() => void>;
  /** Subscribers to several channels at once; one unsubscribe for all. */
  subscribeAll(channels: string[], listener: Listener): Promise<() => void>;
  /** How many channels this connection LISTENs to now. */
  channelCount(): number;
  close(): Promise<void>;
}

export interface BusOptions {
  /** Called with one-line descriptions of connection trouble (default: ignored). */
  onWarning?: (message: string) => void;
}

function backoff(attempt: number): number {
  const base = Math.min(5000, 100 * 2 ** Math.min(attempt, 6));
  return base / 2 + Math.random() * (base / 2);
}

export async function createBus(connectionString: string, options: BusOptions = {}): Promise<Bus> {
  const subscriber: Subscriber = createPostgresSubscriber(
    { connectionString, application_name: "warren-listen" },
    {
      parse: (s: string) => s,
      serialize: (s: unknown) => String(s),
      retryInterval: backoff,
      retryLimit: Infinity,
      retryTimeout: 0, // never give up: a restarted Postgres comes back eventually
      paranoidChecking: 10_000,
    },
  );
  const listeners = new Map<string, Set<Listener>>();
  // LISTEN/UNLISTEN run one at a time on the single connection (pg wants one query at a time),
  // and so in order: a quick unsubscribe+subscribe of one channel is safe.
  let queue: Promise<unknown> = Promise.resolve();
  let connectedOnce = false;
  let closed = false;

  subscriber.events.on("notification", ({ channel, payload }) => {
    const set = listeners.get(channel);
    if (!set) return;
    for (const listener of [...set]) listener(String(payload ?? ""));
  });
  subscriber.events.on("connected", () => {
    if (!connectedOnce) {
      connectedOnce = true;
      return;
    }
    for (const set of listeners.values()) for (const listener of [...set]) listener(RECONNECTED);
  });
  subscriber.events.on("reconnect", (attempt) => {
    options.onWarning?.(`notification listener lost its connection; reconnecting (#${attempt})`);
  });
  subscriber.events.on("error", (err) => {
    options.onWarning?.(`notification listener: ${err.message}`);
  });

  await subscriber.connect();

  function enqueue(op: () => Promise<unknown> | undefined): Promise<unknown> {
    // A failed LISTEN while disconnected is fine: pg-listen re-LISTENs every channel on reconnect.
    queue = queue.then(op).catch(() => undefined);
    return queue;
  }

  async function subscribe(channel: string, listener: Listener): Promise<() => void> {
    let set = listeners.get(channel);
    const first = !set;
    if (!set) {
      set = new Set();
      listeners.set(channel, set);
    }
    set.add(listener);
    await (first ? enqueue(() => subscriber.listenTo(channel)) : queue);
    return () => {
      const current = listeners.get(channel);
      if (!current?.delete(listener) || current.size > 0) return;
      listeners.delete(channel);
      if (!closed) {
        void enqueue(() => (listeners.has(channel) ? undefined : subscriber.unlisten(channel)));
      }
    };
  }

  return {
    subscribe,
    async subscribeAll(channels, listener) {
      const offs = await Promise.all([...new Set(channels)].map((c) => subscribe(c, listener)));
      return () => offs.forEach((off) => off());
    },
    channelCount: () => listeners.size,
    async close() {
      closed = true;
      listeners.clear();
      await subscriber.close().catch(() => undefined);
    },
  };
}
