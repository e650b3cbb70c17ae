// A command's whole process group, killed when its time is up or its call is aborted: bash and
// hooks spawn detached (a group of their own) and end every process in it, not only the first.
import type { ChildProcess } from "node:child_process";

export interface GroupGuard {
  /** Why the group was killed, if it was. */
  readonly state: { timedOut: boolean; aborted: boolean };
  /** The timer and the abort listener let go (the command ended). */
  dispose(): void;
}

export function guardGroup(
  child: ChildProcess,
  timeoutMs: number,
  signal: AbortSignal,
): GroupGuard {
  const state = { timedOut: false, aborted: false };
  const kill = () => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // The group is already gone.
    }
  };
  const onAbort = () => {
    state.aborted = true;
    kill();
  };
  const timer = setTimeout(() => {
    state.timedOut = true;
    kill();
  }, timeoutMs);
  signal.addEventListener("abort", onAbort, { once: true });
  return {
    state,
    dispose() {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    },
  };
}
