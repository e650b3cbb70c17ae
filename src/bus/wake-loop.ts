// The loop of a blocking wait over rows, woken by NOTIFY ("go look"): look when something may
// have changed, and once more at the deadline; between looks, sleep until a wake, the safety
// re-check (a lost NOTIFY) or the deadline. `wait` (mail/wait.ts) and `task_claim`
// (tools/task-claim.ts) are both this loop around their own statements.

export interface WakeLoopRun<T> {
  /** When the last look happens (epoch ms); a look then must answer. */
  deadline: number;
  signal?: AbortSignal;
  /** What the loop throws once `signal` aborts. */
  abortError: () => Error;
  /** An outcome a notification handed over (checked before each look); undefined: none. */
  handed?: () => Promise<T | undefined>;
  /** One look at the rows; `final`: the deadline has passed. undefined: nothing yet. */
  look: (final: boolean) => Promise<T | undefined>;
  /** Called once, before the first sleep that waits for something (not for the deadline's look). */
  onBlock?: () => void | Promise<void>;
  /** The longest sleep without a wake, read at each sleep (Infinity: only the deadline). */
  recheckMs: () => number;
}

export class WakeLoop {
  private dirty = true;
  private poked = false;
  private stopSleep?: () => void;
  private armTimer?: () => void;

  /** Something may have changed: look again. */
  readonly wake = (): void => {
    this.dirty = true;
    this.interrupt();
  };

  /** End the sleep without a new look (an outcome handed over, an abort). */
  readonly interrupt = (): void => {
    this.poked = true;
    this.stopSleep?.();
  };

  /** The re-check interval changed (the bus started or stopped listening): arm it again. */
  retime(): void {
    this.armTimer?.();
  }

  async run<T>(run: WakeLoopRun<T>): Promise<T> {
    const { signal, deadline } = run;
    signal?.addEventListener("abort", this.interrupt);
    let blocked = false;
    try {
      while (true) {
        if (signal?.aborted) throw run.abortError();
        this.poked = false;
        const handed = await run.handed?.();
        if (handed !== undefined) return handed;
        const final = Date.now() >= deadline;
        if (this.dirty || final) {
          this.dirty = false;
          const outcome = await run.look(final);
          if (outcome !== undefined) return outcome;
        }
        if (!blocked && Date.now() < deadline) {
          blocked = true;
          await run.onBlock?.();
        }
        await this.sleep(deadline, run);
      }
    } finally {
      signal?.removeEventListener("abort", this.interrupt);
    }
  }

  /**
   * Not an async function: a sleep is most of a blocked wait's life, and the frame of one (kept
   * by each waiting agent) was memory for nothing. Its ends let go of the timer at once.
   */
  private sleep(deadline: number, run: WakeLoopRun<unknown>): Promise<void> {
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const end = () => {
        clearTimeout(timer);
        this.stopSleep = this.armTimer = undefined;
        resolve();
      };
      this.armTimer = () => {
        clearTimeout(timer);
        const ms = Math.max(0, Math.min(deadline - Date.now(), run.recheckMs()));
        // Fired: the re-check (or the deadline's last look) is due.
        timer = setTimeout(() => {
          this.dirty = true;
          end();
        }, ms);
      };
      this.armTimer();
      this.stopSleep = end;
      if (this.dirty || this.poked || run.signal?.aborted) end();
    });
  }
}
