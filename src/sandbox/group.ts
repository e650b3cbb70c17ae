// A command's whole process group, killed when its time is up or its call is aborted, or when
// warren dies (the lifeline): bash and hooks spawn detached (a group of their own) and end every
// process in it, not only the first.
import type { ChildProcess } from "node:child_process";

export interface GroupGuard {
  /** Why the group was killed, if it was. */
  readonly state: { timedOut: boolean; aborted: boolean };
  /** The timer and the abort listener let go (the command ended). */
  dispose(): void;
}

/** Kills `child`'s group past `timeoutMs` or when `signal` fires (either may be absent). */
export function guardGroup(
  child: ChildProcess,
  timeoutMs: number | undefined,
  signal: AbortSignal | undefined,
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
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          state.timedOut = true;
          kill();
        }, timeoutMs);
  signal?.addEventListener("abort", onAbort, { once: true });
  return {
    state,
    dispose() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    },
  };
}

/**
 * Runs the command (its argument $1) under a watchdog: a background subshell in the same process
 * group reads fd 3, the lifeline, whose other end only this process holds. When the command ends,
 * we write "done" and the watchdog leaves quietly (background jobs the command started live on, as
 * with plain `bash -c`). If this process dies first, the OS closes the lifeline: the watchdog reads
 * end-of-file and kills the whole group, so a crashed warren leaves no command running behind it.
 * The command itself never sees fd 3 or the watchdog's variables. Hooks run under it too
 * (hooks/run.ts); the command's stdin is the script's own.
 */
export const LIFELINE_SCRIPT = `{ IFS= read -r -u 3 word; [ "$word" = done ] || kill -KILL 0; } </dev/null >/dev/null 2>&1 &
exec 3<&-
__warren_command=$1
shift
eval "$__warren_command"`;
