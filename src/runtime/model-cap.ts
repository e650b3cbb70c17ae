// A model server's capacity, shared (SPEC §3 "Model concurrency"; migration 0026). With
// `max_concurrent_requests`, each model request of a turn first takes one of its server's slots:
// one database round trip when a slot is free. Over the cap the agent shows `queued`, lends its
// scheduler slot (as a blocked `wait` does) and sleeps until a NOTIFY names its ticket (FIFO), with
// a periodic re-check as the safety net. A slot is bound to the agent's lease: a crashed holder's
// slot frees itself when the lease ends. A 429 with Retry-After pauses the server for every process.
import { LeaseLost } from "../agents/errors.js";
import { RECONNECTED, UNLISTENED_POLL_MS, type Bus } from "../bus/bus.js";
import { MODEL_SLOT_CHANNEL } from "../bus/channels.js";
import { serverKey, type ModelConfig } from "../config/config.js";
import type { Db } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import { isTransient } from "../db/retry.js";
import { setActivity } from "../feed/publish.js";
// The activity a queued agent shows (the panel, the spinner, the status layer, `warren ls`).
import { QUEUED_ACTIVITY } from "../feed/types.js";
import type { Model, ModelRequest, ModelResponse } from "../llm/model.js";
import { RECHECK_MS } from "../mail/recheck.js";
import type { TurnDeps } from "./run-deps.js";

/** A capped server: the row's key and its cap. */
export interface CapTarget {
  key: string;
  cap: number;
}

/**
 * The cap a request for `modelName` falls under: the model's own (its key names the server and
 * the model), else its server's; undefined without one.
 */
export function capFor(model: ModelConfig, modelName: string): CapTarget | undefined {
  const caps = model.maxConcurrent;
  if (!caps) return undefined;
  const server = serverKey(model.baseURL);
  const byModel = caps[modelName];
  if (byModel !== undefined) return { key: `${server} ${modelName}`, cap: byModel };
  const byServer = caps[server];
  return byServer === undefined ? undefined : { key: server, cap: byServer };
}

interface Acquired {
  granted: boolean;
  ticket: string;
  paused_ms: number;
  lost: boolean;
}

const ACQUIRE: Prepared = {
  name: "warren_model_acquire",
  text: `select granted, ticket::text as ticket, paused_ms, lost
           from warren_model_acquire($1::text, $2::int, $3::uuid, $4::bigint, $5::bigint)`,
};

const RELEASE: Prepared = {
  name: "warren_model_release",
  text: `select from warren_model_release($1::text, $2::uuid, $3::bigint)`,
};

const PAUSE: Prepared = {
  name: "warren_model_pause",
  text: `select from warren_model_pause($1::text, $2::float8)`,
};

/** Takes a slot of `target` for the agent at lease `epoch` (or keeps its place `ticket`). */
export async function acquireSlot(
  db: Db,
  target: CapTarget,
  agentId: string,
  epoch: number,
  ticket: string | null,
): Promise<Acquired> {
  const [row] = await runPrepared<Acquired>(db, ACQUIRE, [
    target.key,
    target.cap,
    agentId,
    epoch,
    ticket,
  ]);
  return row!;
}

/** Gives a slot (or a place in the queue) back; the oldest waiters get the free slots. */
export async function releaseSlot(
  db: Db,
  key: string,
  agentId: string,
  ticket: string,
): Promise<void> {
  await runPrepared(db, RELEASE, [key, agentId, ticket]);
}

/** No slot of server `key` is granted for `ms` (a 429's Retry-After), in any process. */
export async function pauseServer(db: Db, key: string, ms: number): Promise<void> {
  await runPrepared(db, PAUSE, [key, ms]);
}

/**
 * `deps.model` bound to the caps: each request takes its server's slot first and gives it back
 * when it ends, whatever the end. Without a cap in the config (or a lease to bind slots to) it is
 * `deps.model` itself: no round trip added.
 */
export function withModelCap(deps: TurnDeps, agentId: string): Model {
  const inner = deps.model;
  const fence = deps.fence;
  if (!deps.config.model.maxConcurrent || !fence) return inner;
  return {
    contextWindow: inner.contextWindow ? (model) => inner.contextWindow!(model) : undefined,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const target = capFor(deps.config.model, request.model);
      if (!target) return inner.complete(request);
      const ticket = await takeSlot(deps, agentId, fence.epoch, target, request.signal);
      try {
        return await inner.complete({
          ...request,
          onRateLimited: async (ms) => {
            await request.onRateLimited?.(ms);
            await pauseServer(deps.db, target.key, ms);
          },
        });
      } finally {
        // Not waited for: the request's cost stays one round trip (the acquire). A release that
        // fails is made up for by the agent's next acquire (one row per agent) or its lease's end.
        void giveBack(deps.db, target.key, agentId, ticket);
      }
    },
  };
}

async function giveBack(db: Db, key: string, agentId: string, ticket: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await releaseSlot(db, key, agentId, ticket);
    } catch (err) {
      if (!isTransient(err)) return;
      await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt).unref());
    }
  }
}

/** Resolves with the slot's ticket once granted; queued meanwhile, without a scheduler slot. */
async function takeSlot(
  deps: TurnDeps,
  agentId: string,
  epoch: number,
  target: CapTarget,
  signal: AbortSignal,
): Promise<string> {
  const waiters = waitersOf(deps.bus);
  // Once per thread: listening before the first acquire, so no grant's NOTIFY is missed.
  await waiters.ready;
  let answer = await acquireSlot(deps.db, target, agentId, epoch, null);
  if (answer.granted) return answer.ticket;
  const ticket = answer.ticket;
  try {
    await setActivity(deps.db, agentId, QUEUED_ACTIVITY, deps.fence);
    deps.slot?.release();
    while (!answer.granted) {
      if (answer.lost) throw new LeaseLost(agentId);
      // No NOTIFY tells of a lease that ran out under a crashed holder: re-checked at least once
      // per lease, so its slot goes to a waiter within about two leases.
      const recheck = deps.bus.listening()
        ? Math.min(RECHECK_MS, deps.config.leaseSeconds * 1000)
        : UNLISTENED_POLL_MS;
      const ms = answer.paused_ms > 0 ? Math.min(recheck, answer.paused_ms + 20) : recheck;
      // Told its ticket: granted (under the server's lock). Anything else: ask again.
      if (await waiters.wait(ticket, ms, signal)) break;
      answer = await acquireSlot(deps.db, target, agentId, epoch, ticket);
    }
  } catch (err) {
    // An interrupt, a kill, a lost lease: the place (or a slot granted meanwhile) goes at once.
    await releaseSlot(deps.db, target.key, agentId, ticket).catch(() => undefined);
    throw err;
  } finally {
    // Resolves at once when the turn was stopped.
    await deps.slot?.reacquire(signal);
  }
  // Refused only when the lease is lost: then the slot is void anyway, and given back at once.
  await setActivity(deps.db, agentId, "thinking", deps.fence).catch((err: unknown) => {
    void giveBack(deps.db, target.key, agentId, ticket);
    throw err;
  });
  return ticket;
}

interface SlotWaiters {
  /** Resolves once the thread listens on MODEL_SLOT_CHANNEL. */
  ready: Promise<void>;
  /** True when told `ticket` was granted; false after `ms` or a re-check hint; rejects on abort. */
  wait(ticket: string, ms: number, signal: AbortSignal): Promise<boolean>;
}

/** One listener per bus (so per worker thread) for every queued turn of it, as recheck.ts does. */
const waitersByBus = new WeakMap<Bus, SlotWaiters>();

function waitersOf(bus: Bus): SlotWaiters {
  let waiters = waitersByBus.get(bus);
  if (!waiters) {
    waiters = createWaiters(bus);
    waitersByBus.set(bus, waiters);
  }
  return waiters;
}

/** Granted tickets heard before their waiter got to wait, kept this many at most. */
const TOLD_MAX = 1024;

function createWaiters(bus: Bus): SlotWaiters {
  const byTicket = new Map<string, (granted: boolean) => void>();
  // A grant may be told between the acquire's answer and the wait: remembered for it.
  const told = new Set<string>();
  const onHint = (payload: string) => {
    if (payload === "*" || payload === RECONNECTED) {
      for (const wake of [...byTicket.values()]) wake(false);
      return;
    }
    const wake = byTicket.get(payload);
    if (wake) return wake(true);
    told.add(payload);
    if (told.size > TOLD_MAX) told.delete(told.values().next().value!);
  };
  const ready = bus.subscribe(MODEL_SLOT_CHANNEL, onHint).then(() => undefined);
  return {
    ready,
    wait(ticket, ms, signal) {
      if (told.delete(ticket)) return Promise.resolve(true);
      if (signal.aborted) return Promise.reject(signal.reason as Error);
      return new Promise<boolean>((resolve, reject) => {
        const settle = () => {
          clearTimeout(timer);
          byTicket.delete(ticket);
          signal.removeEventListener("abort", onAbort);
        };
        const wake = (granted: boolean) => {
          settle();
          resolve(granted);
        };
        const onAbort = () => {
          settle();
          reject(signal.reason as Error);
        };
        const timer = setTimeout(() => wake(false), ms);
        byTicket.set(ticket, wake);
        signal.addEventListener("abort", onAbort, { once: true });
      });
    },
  };
}
