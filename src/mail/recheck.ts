// The safety re-check of blocked waits, shared: NOTIFY wakes a wait, and this covers a
// notification lost some other way. One sweep per bus (so per worker thread) asks the database
// once for every wait blocked on it — which have mail, which awaited agents have settled — and
// wakes only those: 1,000 waiting agents cost one small query per interval, not 1,000.
import type { Db } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import { UNLISTENED_POLL_MS, type Bus } from "../bus/bus.js";

/** The interval while the bus hears NOTIFYs; without them the sweep runs every second. */
export const RECHECK_MS = 15_000;

export interface BlockedWait {
  agentId: string;
  /** A fan-in's awaited agents: one that went idle or died settles it. */
  fromAgents?: readonly string[];
  /** A registered wait's call key (handoff.ts): a result recorded under it answers the wait. */
  key?: string;
  wake(): void;
}

const SWEEP: Prepared = {
  name: "warren_wait_sweep",
  text: `
    select 'm' as k, to_id::text as id from mail
     where to_id = any($1::uuid[]) and consumed_at is null and kind = 'mail'
     group by to_id
    union all
    select 's', id::text from agents where id = any($2::uuid[]) and state in ('idle', 'dead')
    union all
    select 'r', e.agent_id::text || ' ' || e.key
      from unnest($3::uuid[], $4::text[]) as t(agent_id, key)
      join events e on e.agent_id = t.agent_id and e.key = t.key`,
};

interface Sweeper {
  add(wait: BlockedWait): () => void;
}

const sweepers = new WeakMap<Bus, Sweeper>();

/** Registers a blocked wait with its thread's sweep; returns the way to take it out. */
export function blockUntilRechecked(db: Db, bus: Bus, wait: BlockedWait): () => void {
  let sweeper = sweepers.get(bus);
  if (!sweeper) {
    sweeper = createSweeper(db, bus);
    sweepers.set(bus, sweeper);
  }
  return sweeper.add(wait);
}

function createSweeper(db: Db, bus: Bus): Sweeper {
  const waits = new Set<BlockedWait>();
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  const interval = () => (bus.listening() ? RECHECK_MS : UNLISTENED_POLL_MS);
  const schedule = () => {
    if (timer || waits.size === 0) return;
    timer = setTimeout(() => void sweep(), interval());
    timer.unref();
  };
  // Listening or not changes the interval: start over with the new one.
  bus.onListeningChange(() => {
    clearTimeout(timer);
    timer = undefined;
    schedule();
  });
  async function sweep(): Promise<void> {
    timer = undefined;
    if (running || waits.size === 0) return schedule();
    running = true;
    const current = [...waits];
    try {
      const agents = [...new Set(current.map((w) => w.agentId))];
      const awaited = [...new Set(current.flatMap((w) => w.fromAgents ?? []))];
      const keyed = current.filter((w) => w.key !== undefined);
      const rows = await runPrepared<{ k: string; id: string }>(db, SWEEP, [
        agents,
        awaited,
        keyed.map((w) => w.agentId),
        keyed.map((w) => w.key),
      ]);
      const found = (k: string) => new Set(rows.filter((r) => r.k === k).map((r) => r.id));
      const [mail, settled, answered] = [found("m"), found("s"), found("r")];
      for (const w of current) {
        if (
          mail.has(w.agentId) ||
          w.fromAgents?.some((id) => settled.has(id)) ||
          answered.has(`${w.agentId} ${w.key}`)
        ) {
          w.wake();
        }
      }
    } catch {
      // The database is away: the next sweep asks again (and a reconnecting bus re-checks all).
    } finally {
      running = false;
      schedule();
    }
  }
  return {
    add(wait) {
      waits.add(wait);
      schedule();
      return () => {
        waits.delete(wait);
        if (waits.size === 0) {
          clearTimeout(timer);
          timer = undefined;
        }
      };
    },
  };
}
