// The TUI's one frame clock: every change asks it for a paint, and nothing else schedules one.
// At most one paint per interval; a change after a quiet interval paints at once (leading edge),
// and so does a key, whatever was painted just before it. The viewed agent's text paints early
// too, but at most once per interval, so it costs at most twice the frame rate.

/** The shortest time between two paints: a burst of changes (50 streaming agents) is one paint. */
export const FRAME_MS = 16;

export interface FrameClock {
  /**
   * Something changed: paint on the next turn of the event loop when nothing was painted in the
   * last interval (so a lone update or a key is not held back), else when the interval ends.
   */
  request(): void;
  /**
   * A person's key, or what answers it (the history of the agent a key switched to): paint on the
   * next turn of the event loop even within the interval. The interval bounds what updates from
   * elsewhere cost (200 streaming agents); a key waiting for it would wait up to a frame whenever
   * anything had just painted. Keys come at a person's pace, and the keys of one read of the
   * terminal (a paste) are one paint; so they need no budget, and the text's must not hold them.
   */
  requestNow(): void;
  /**
   * The text of the agent the person watches moved on: paint on the next turn even within the
   * interval, unless the text already had an early paint in it (then as request()). A delta
   * waiting for the interval would wait up to a frame whenever a spinner tick had just painted;
   * 50 agents' deltas come faster than frames, hence the budget.
   */
  requestText(): void;
  /** Asks for a paint `ms` from now (a flash that expires, a status line that times out). */
  requestIn(ms: number): void;
  /** Cancels every pending paint; requests after this do nothing. */
  close(): void;
}

export interface FrameClockOptions {
  /**
   * Paints one frame. Returning a number says the frame is not ready (an agent's history still
   * loading): nothing was painted, and the clock tries again that many ms later or on the next
   * request, whichever comes first.
   */
  paint: () => number | void;
  intervalMs?: number;
  now?: () => number;
}

export function createFrameClock(options: FrameClockOptions): FrameClock {
  const interval = options.intervalMs ?? FRAME_MS;
  const now = options.now ?? Date.now;
  let dirty = false;
  let closed = false;
  let lastPaint = -Infinity;
  /** When the last paint asked for by requestText within an interval was made. */
  let lastEarly = -Infinity;
  let early = false;
  /** The next paint: on the next turn (leading edge) or when the interval ends. */
  let soon: { immediate: NodeJS.Immediate } | { timer: NodeJS.Timeout } | undefined;
  /** The retry of a frame that was not ready. */
  let retry: NodeJS.Timeout | undefined;
  const wakes = new Set<NodeJS.Timeout>();

  const cancelSoon = () => {
    if (soon && "immediate" in soon) clearImmediate(soon.immediate);
    else if (soon) clearTimeout(soon.timer);
    soon = undefined;
  };

  const run = () => {
    soon = undefined;
    clearTimeout(retry);
    retry = undefined;
    if (!dirty || closed) return;
    // Cleared before painting: a change made while painting asks for the next frame.
    dirty = false;
    const wait = options.paint();
    if (typeof wait === "number") {
      dirty = true;
      retry = setTimeout(run, Math.max(0, wait));
      return;
    }
    lastPaint = now();
    if (early) lastEarly = lastPaint;
    early = false;
  };

  const request = () => {
    dirty = true;
    if (closed || soon) return;
    const wait = lastPaint + interval - now();
    soon = wait <= 0 ? { immediate: setImmediate(run) } : { timer: setTimeout(run, wait) };
  };

  /** Paints on the next turn, before the interval's timer. */
  const paintNextTurn = () => {
    dirty = true;
    cancelSoon();
    soon = { immediate: setImmediate(run) };
  };

  return {
    request,
    requestNow() {
      if (closed || (soon && "immediate" in soon)) return void (dirty = true);
      paintNextTurn();
    },
    requestText() {
      if (closed || (soon && "immediate" in soon)) return void (dirty = true);
      if (now() - lastEarly < interval || now() - lastPaint >= interval) return request();
      early = true;
      paintNextTurn();
    },
    requestIn(ms) {
      if (closed) return;
      const wake = setTimeout(() => {
        wakes.delete(wake);
        request();
      }, ms);
      wake.unref();
      wakes.add(wake);
    },
    close() {
      closed = true;
      cancelSoon();
      clearTimeout(retry);
      for (const wake of wakes) clearTimeout(wake);
      wakes.clear();
    },
  };
}
