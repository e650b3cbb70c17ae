// One scheduler per worker thread: wakes on the work channel (and a slow poll that also picks up
// expired leases), claims agents up to its concurrency, heart-beats their leases, and stops a
// turn at once when its agent is killed or interrupted.
//
// A slot is a turn doing work. An agent blocked in `wait` gives its slot back (it still holds its
// lease and costs only memory), so waiting parents never starve the children they wait for; when
// its wait returns it takes a slot again, before any new claim.
import { randomUUID } from "node:crypto";
import { UNLISTENED_POLL_MS } from "../bus/bus.js";
import { parseStopHint, STOP_CHANNEL, WORK_CHANNEL } from "../bus/channels.js";
import { isTransient, shownError } from "../db/retry.js";
import { notice, outage, type Warning, type WarningSink } from "../db/warning.js";
import { expireHints, HINT_SWEEP_MS } from "../feed/watchers.js";
import { claimUpTo, heartbeat, release } from "./leases.js";
import type { Slot, TurnDeps } from "./run-deps.js";
import { runAgent, TurnStopped, type RunEnd, type StopReason } from "./turn.js";

/**
 * Past this part of the lease without a renewal, a turn is stopped (its effects with it): with
 * beats every third of the lease, that is two missed beats, and a third of the lease is left for
 * the kill to land before anyone else may claim the agent.
 */
export const STALE_FRACTION = 2 / 3;

export interface SchedulerOptions {
  concurrency: number;
  leaseSeconds: number;
  /** Run only this tree's agents (`warren -p`, the TUI); absent = every tree's (`warren worker`). */
  treeId?: string;
  /** Safety poll for lost NOTIFYs and expired leases. */
  pollMs?: number;
  /** How often hint triggers left on by a crashed feed are looked for (default HINT_SWEEP_MS). */
  hintSweepMs?: number;
  onWarning?: WarningSink;
}

export interface Scheduler {
  readonly owner: string;
  runningCount(): number;
  /** Turns doing work now: running, not blocked in `wait` (their slot lent). */
  busyCount(): number;
  /** Stops every turn, gives the leases back, and resolves when all turns have returned. */
  stop(): Promise<void>;
}

export async function startScheduler(
  deps: TurnDeps,
  options: SchedulerOptions,
): Promise<Scheduler> {
  const owner = `${process.pid}:${randomUUID().slice(0, 8)}`;
  const running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  // Effects bound to the lease (SPEC §5): when each running agent's lease was last known renewed
  // (performance.now() when the claim or the successful heartbeat was *sent*, so never later
  // than the database's renewal). Past STALE_FRACTION of the lease without one, the turn is
  // stopped (its bash process groups killed, its model stream and tool calls aborted) before the
  // lease can expire and another worker take the agent over: a command never runs twice at once.
  const renewed = new Map<string, number>();
  const staleMs = options.leaseSeconds * 1000 * STALE_FRACTION;
  // Agents whose turn waits without a slot, and those of them queued to take one back.
  const parked = new Set<string>();
  const returning: { agentId: string; resume: () => void }[] = [];
  const busy = () => running.size - parked.size;
  // A claim in flight may take the slots it asks for: counted, so a returning wait cannot
  // overfill meanwhile.
  let claimingSlots = 0;
  const full = () => busy() + claimingSlots >= options.concurrency;
  let stopping = false;
  let claiming = false;
  let again = false;
  let claimLoop: Promise<void> = Promise.resolve();
  const warn = (warning: Warning) => options.onWarning?.(warning);

  const stopTurn = (agentId: string, reason: StopReason) => {
    const turn = running.get(agentId);
    if (turn && !turn.controller.signal.aborted) turn.controller.abort(new TurnStopped(reason));
  };

  async function launch(agentId: string, epoch: number, claimedAt: number): Promise<void> {
    const controller = new AbortController();
    renewed.set(agentId, claimedAt);
    const done = (async () => {
      let end: RunEnd = "other";
      try {
        end = await runAgent(turnDeps(agentId, epoch), agentId, controller.signal, (reason) =>
          controller.abort(reason),
        );
      } catch (err) {
        warn(
          isTransient(err)
            ? outage(err)
            : notice(`agent ${agentId.slice(0, 8)}: ${shownError(err)}`),
        );
      } finally {
        // Gone idle, the agent gave its lease back; after anything else (a stop, an interrupt
        // with mail pending, a failure) it is given back here, so a worker resumes at once.
        if (end !== "idle") await release(deps.db, owner, agentId).catch(() => undefined);
        running.delete(agentId);
        renewed.delete(agentId);
        unpark(agentId);
        if (!stopping) serve();
      }
    })();
    running.set(agentId, { controller, done });
  }

  /**
   * A turn's deps, as one literal: a `{ ...deps, … }` spread got a hidden class of its own per
   * agent (~300 bytes each, held while its turn waits).
   */
  function turnDeps(agentId: string, epoch: number): TurnDeps {
    return {
      db: deps.db,
      bus: deps.bus,
      model: deps.model,
      config: deps.config,
      onWarning: warn,
      fence: { owner, epoch },
      onLeaseLost: deps.onLeaseLost,
      onWaitProgress: deps.onWaitProgress,
      slot: slotOf(agentId),
    };
  }

  function slotOf(agentId: string): Slot {
    return {
      release() {
        if (!running.has(agentId) || parked.has(agentId)) return;
        parked.add(agentId);
        serve();
      },
      reacquire(signal) {
        if (!parked.has(agentId)) return Promise.resolve();
        if (returning.length === 0 && !full()) {
          parked.delete(agentId);
          return Promise.resolve();
        }
        return new Promise<void>((resolve) => {
          const resume = () => {
            signal.removeEventListener("abort", resume);
            resolve();
          };
          returning.push({ agentId, resume });
          // A stopped turn stops queueing; its slot is settled when it ends.
          signal.addEventListener("abort", resume, { once: true });
        });
      },
    };
  }

  /** Forgets a parked agent (its turn ended), letting a queued reacquire go. */
  function unpark(agentId: string): void {
    parked.delete(agentId);
    for (let i = returning.length - 1; i >= 0; i--) {
      if (returning[i]!.agentId === agentId) returning.splice(i, 1)[0]!.resume();
    }
  }

  /** Hands free slots to returning waits first, then claims new work. */
  function serve(): void {
    handOut();
    kick();
  }

  function handOut(): void {
    while (returning.length > 0 && !full()) {
      const next = returning.shift()!;
      parked.delete(next.agentId);
      next.resume();
    }
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
          while (!stopping && returning.length === 0 && !full()) {
            const free = options.concurrency - busy();
            claimingSlots = free;
            const claimedAt = performance.now();
            const claimed = await claimUpTo(
              deps.db,
              owner,
              options.leaseSeconds,
              free,
              options.treeId,
              // Never a second runner for an agent this scheduler runs (its lease may have lapsed
              // under load before the heartbeat renewed it): that would run its turn twice.
              [...running.keys()],
            ).catch((err: unknown) => {
              claimingSlots = 0;
              throw err;
            });
            if (stopping) {
              // stop() began while this claim was in flight: hand the agents straight back.
              claimingSlots = 0;
              for (const agent of claimed) await release(deps.db, owner, agent.id);
              break;
            }
            for (const agent of claimed) await launch(agent.id, agent.lease_epoch, claimedAt);
            // Only now: until the claimed are running, their slots stay taken.
            claimingSlots = 0;
            // A short answer: no more work now (a NOTIFY or the poll kicks again).
            if (claimed.length < free) break;
          }
        } while (again && !stopping);
      } catch (err) {
        // The poll kicks again in a moment: a database that is away is simply retried.
        warn(isTransient(err) ? outage(err) : notice(`claiming work failed: ${shownError(err)}`));
      } finally {
        claiming = false;
        // A wait that returned while a claim was in flight may have queued for its slot.
        handOut();
      }
    })();
  }

  /** The poll's beat, unless its last one is still in flight (the timer's beats go regardless). */
  let beating: Promise<void> | undefined;
  function beatOnce(): Promise<void> {
    beating ??= beat().finally(() => (beating = undefined));
    return beating;
  }

  async function beat(): Promise<void> {
    const ids = [...running.keys()];
    if (ids.length === 0) return;
    const sentAt = performance.now();
    try {
      const alive = await heartbeat(deps.db, owner, ids, options.leaseSeconds);
      const held = new Map(alive.map((r) => [r.id, r]));
      for (const id of ids) {
        const row = held.get(id);
        if (row?.extended && running.has(id)) {
          renewed.set(id, Math.max(renewed.get(id) ?? sentAt, sentAt));
        }
        if (!row) stopTurn(id, "lease-lost");
        else if (row.state === "dead") stopTurn(id, "dead");
        else if (row.interrupt) stopTurn(id, "interrupt");
      }
    } catch (err) {
      // The next beat retries; a lease lasts three beats.
      warn(isTransient(err) ? outage(err) : notice(`lease heartbeat failed: ${shownError(err)}`));
    }
  }

  /**
   * Stops the turns whose lease was not renewed for most of its length (see `renewed`), and says
   * so in one line for all of them (an outage stops many at once).
   */
  function stopStale(): void {
    const now = performance.now();
    const stale: string[] = [];
    let longest = 0;
    for (const [id, at] of renewed) {
      const turn = running.get(id);
      if (!turn || turn.controller.signal.aborted || now - at <= staleMs) continue;
      stale.push(id);
      longest = Math.max(longest, now - at);
      stopTurn(id, "lease-lost");
    }
    if (stale.length === 0) return;
    const who = stale.length === 1 ? `agent ${stale[0]!.slice(0, 8)}` : `${stale.length} agents`;
    warn(
      notice(
        `${who}: lease not renewed for ${Math.round(longest / 1000)} s; ` +
          "tool processes stopped before another worker can take over",
      ),
    );
  }

  // A database that is away is reported by the claims and beats; this only tries again later.
  async function sweepHints(): Promise<void> {
    try {
      await expireHints(deps.db);
    } catch (err) {
      if (!isTransient(err))
        warn(notice(`turning off stale feed hints failed: ${shownError(err)}`));
    }
  }

  const unsubscribeWork = await deps.bus.subscribe(WORK_CHANNEL, () => kick());
  // A kill or an interrupt of any agent: the turn of it this scheduler runs stops within
  // milliseconds (one missed while not listening is seen by the turn's next pass read).
  const unsubscribeStop = await deps.bus.subscribe(STOP_CHANNEL, (payload) => {
    const stop = parseStopHint(payload);
    if (stop) stopTurn(stop.agentId, stop.signal);
  });
  // Without NOTIFYs (LISTEN off or down) the poll is all there is: then it runs every
  // UNLISTENED_POLL_MS instead of every pollMs.
  const pollMs = options.pollMs ?? 2_000;
  const tickMs = Math.min(pollMs, UNLISTENED_POLL_MS);
  let polledAt = Date.now();
  const poll = setInterval(() => {
    if (deps.bus.listening() && Date.now() - polledAt < pollMs - tickMs / 2) return;
    polledAt = Date.now();
    kick();
    // Unheard, a kill or an interrupt of a turn that reads nothing (a hung model call, a long
    // tool) is seen by the heartbeat's answer, which then comes every tick, not every third of a
    // lease: the stop reaches the turn within UNLISTENED_POLL_MS, as a NOTIFY would at once.
    if (!deps.bus.listening()) void beatOnce();
  }, tickMs);
  const beats = setInterval(() => void beat(), (options.leaseSeconds * 1000) / 3);
  // Checked often against the clock, not only at beats: a beat in flight may hang for long.
  const stale = setInterval(stopStale, Math.max(50, (options.leaseSeconds * 1000) / 24));
  const hints = setInterval(() => void sweepHints(), options.hintSweepMs ?? HINT_SWEEP_MS);
  kick();

  return {
    owner,
    runningCount: () => running.size,
    busyCount: busy,
    async stop() {
      stopping = true;
      clearInterval(poll);
      clearInterval(beats);
      clearInterval(stale);
      clearInterval(hints);
      unsubscribeWork();
      unsubscribeStop();
      await claimLoop;
      for (const id of running.keys()) stopTurn(id, "shutdown");
      await Promise.all([...running.values()].map((t) => t.done));
    },
  };
}
