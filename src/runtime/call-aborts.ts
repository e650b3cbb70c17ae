// Every tool call races the agent's abort signal (SPEC §3): Escape, /stop, kill and a lost lease
// end it at once, whatever the tool is doing (a hung read, a stuck query). One listener on the
// turn's signal fans out to a signal per call, and each call's listeners go when it ends: a
// response of many calls never piles listeners on one signal (MaxListenersExceededWarning).

/** The signals of the calls running now under one turn signal. */
export class CallAborts {
  private readonly calls = new Set<AbortController>();
  private readonly onAbort = () => {
    for (const call of this.calls) call.abort(this.parent.reason);
  };
  private listening = false;

  constructor(private readonly parent: AbortSignal) {}

  /** A signal for one call, aborted with the parent; give it back with `end`. */
  begin(): AbortController {
    const call = new AbortController();
    if (this.parent.aborted) {
      call.abort(this.parent.reason);
      return call;
    }
    this.calls.add(call);
    if (!this.listening) {
      this.parent.addEventListener("abort", this.onAbort, { once: true });
      this.listening = true;
    }
    return call;
  }

  /** The call is over: its signal no longer follows the parent (the last one removes the listener). */
  end(call: AbortController): void {
    this.calls.delete(call);
    if (this.calls.size === 0 && this.listening) {
      this.parent.removeEventListener("abort", this.onAbort);
      this.listening = false;
    }
  }
}

/** The error a raced call ends with when its signal fires first. */
export function abortReason(signal: AbortSignal): unknown {
  if (signal.reason instanceof Error) return signal.reason;
  const err = new Error("tool call interrupted");
  err.name = "AbortError";
  return err;
}

/**
 * `work`, or a rejection with the signal's reason as soon as `signal` aborts, whichever is first.
 * The listener is removed when either settles. Work left behind settles on its own; its result is
 * dropped (a tool that writes keys its writes and fences them by the lease).
 */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      work.catch(() => undefined);
      reject(abortReason(signal));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
