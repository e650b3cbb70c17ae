// One scheduler per worker thread: wakes on the work channel (and a slow poll that also picks up
// expired leases), claims agents up to its concurrency, heart-beats their leases, and stops a
// turn at once when its agent is killed or interrupted.
import { randomUUID } from "node:crypto";
import { agentChannel, WORK_CHANNEL } from "../bus/channels.js";
import { isTransient, shownError, unreachableLine } from "../db/retry.js";
import { claimNext, heartbeat, release } from "./leases.js";
import { runAgent, TurnStopped, type StopReason, type TurnDeps } from "./turn.js";

export interface SchedulerOptions {
  concurrency: number;
  leaseSeconds: number;
  /** Run only this tree's agents (`warren -p`, the TUI); absent = every tree's (`warren worker`). */
  treeId?: string;
  /** Safety poll for lost NOTIFYs and expired leases. */
  pollMs?: number;
  onWarning?: (message: string) => void;
}

export interface Scheduler {
  readonly owner: string;
  runningCount(): number;
  /** Stops every turn, gives the leases back, and resolves when all turns have returned. */
  stop(): Promise<void>;
}

export async function startScheduler(
  deps: TurnDeps,
  options: SchedulerOptions,
): Promise<Scheduler> {
  const owner = `${process.pid}:${randomUUID().slice(0, 8)}`;
  const running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  let stopping = false;
  let claiming = false;
  let again = false;
  let claimLoop: Promise<void> = Promise.resolve();
  const warn = (message: string) => options.onWarning?.(message);

  const stopTurn = (agentId: string, reason: StopReason) => {
    const turn = running.get(agentId);
    if (turn && !turn.controller.signal.aborted) turn.controller.abort(new TurnStopped(reason));
  };

  async function launch(agentId: string): Promise<void> {
    const controller = new AbortController();
    let unsubscribe = () => {};
    const done = (async () => {
      try {
        unsubscribe = await deps.bus.subscribe(agentChannel(agentId), (payload) => {
          if (payload === "dead") stopTurn(agentId, "dead");
          else if (payload === "interrupt") stopTurn(agentId, "interrupt");
        });
        await runAgent({ ...deps, leaseOwner: owner, onWarning: warn }, agentId, controller.signal);
      } catch (err) {
        warn(
          isTransient(err)
            ? unreachableLine(err)
            : `agent ${agentId.slice(0, 8)}: ${shownError(err)}`,
        );
      } finally {
        unsubscribe();
        // After a normal end the lease is already gone; after a stop, give it back for a resume.
        await release(deps.db, owner, agentId).catch(() => undefined);
        running.delete(agentId);
        if (!stopping) kick();
      }
    })();
    running.set(agentId, { controller, done });
  }

  function kick(): void {
    if (stopping) return;
    if (claiming) {
      again = true;
      return;
    }
    claiming = true;
    claimLoop = (async () => {
      try {
        do {
          again = false;
          while (!stopping && running.size < options.concurrency) {
            const agent = await claimNext(
              deps.db,
              owner,
              options.leaseSeconds,
              options.treeId,
              // Never a second runner for an agent this scheduler runs (its lease may have lapsed
              // under load before the heartbeat renewed it): that would run its turn twice.
              [...running.keys()],
            );
            if (!agent) break;
            if (stopping) {
              // stop() began while this claim was in flight: hand the agent straight back.
              await release(deps.db, owner, agent.id);
              break;
            }
            await launch(agent.id);
          }
        } while (again && !stopping);
      } catch (err) {
        // The poll kicks again in a moment: a database that is away is simply retried.
        warn(isTransient(err) ? unreachableLine(err) : `claiming work failed: ${shownError(err)}`);
      } finally {
        claiming = false;
      }
    })();
  }

  async function beat(): Promise<void> {
    const ids = [...running.keys()];
    if (ids.length === 0) return;
    try {
      const alive = await heartbeat(deps.db, owner, ids, options.leaseSeconds);
      const held = new Map(alive.map((r) => [r.id, r]));
      for (const id of ids) {
        const row = held.get(id);
        if (!row) stopTurn(id, "lease-lost");
        else if (row.state === "dead") stopTurn(id, "dead");
        else if (row.interrupt) stopTurn(id, "interrupt");
      }
    } catch (err) {
      // The next beat retries; a lease lasts three beats.
      warn(isTransient(err) ? unreachableLine(err) : `lease heartbeat failed: ${shownError(err)}`);
    }
  }

  const unsubscribeWork = await deps.bus.subscribe(WORK_CHANNEL, () => kick());
  const poll = setInterval(kick, options.pollMs ?? 2_000);
  const beats = setInterval(() => void beat(), (options.leaseSeconds * 1000) / 3);
  kick();

  return {
    owner,
    runningCount: () => running.size,
    async stop() {
      stopping = true;
      clearInterval(poll);
      clearInterval(beats);
      unsubscribeWork();
      await claimLoop;
      for (const id of running.keys()) stopTurn(id, "shutdown");
      await Promise.all([...running.values()].map((t) => t.done));
    },
  };
}
