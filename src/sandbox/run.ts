// The one way warren runs a command for an agent or for the person's hooks and MCP servers:
// confined (a warm sandbox for bash where it can, else bubblewrap per call) or unconfined when the
// settings say so, with the environment allowlist, in a process group of its own that is killed
// whole on timeout or abort, and — outside a warm sandbox — under the lifeline watchdog, so that
// warren's death (kill -9 included) ends it too. bash (tools/bash.ts), hooks (hooks/run.ts) and
// MCP stdio servers (mcp/stdio.ts) all start their process here.
import { spawn, type ChildProcess } from "node:child_process";
import { guardGroup, LIFELINE_SCRIPT, type GroupGuard } from "./group.js";
import { shellLaunch } from "./launch.js";
import type { ShellSettings } from "./settings.js";
import { warmLaunch, type WarmLaunch } from "./warm.js";

export interface ConfinedCommand {
  /** The sandbox and the environment's additions (undefined: sandbox auto, allowlist only). */
  settings: ShellSettings | undefined;
  cwd: string;
  /** `bash -c` text (bash, hooks), or a program and its arguments (an MCP server). */
  run: { command: string } | { argv: string[] };
  /** Set after the allowlist: a hook's CLAUDE_PROJECT_DIR, a server's own configured env. */
  env?: Record<string, string>;
  /** Whether the command's stdin is a pipe (hooks, servers) or closed (bash). */
  stdin?: boolean;
  /** bash: the agent whose warm sandbox the call may use (undefined: per call only). */
  warmOwner?: string;
  /** Past this the whole group is killed (undefined: runs until stopped, as a server does). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A started command. */
export interface Confined {
  child: ChildProcess;
  sandboxed: boolean;
  /** Why the group was killed, if it was (timeout or abort). */
  readonly state: { timedOut: boolean; aborted: boolean };
  /** Call once the output is being read: hands a warm standby its command. */
  begin(): void;
  /** The command's first process exited: the watchdog leaves; a warm sandbox checks leftovers. */
  exited(): void;
  /** The call is over: timer, abort listener and lifeline let go; `clean` keeps a warm sandbox. */
  finish(clean: boolean): void;
  /** Kills the whole process group now. */
  kill(): void;
}

export type ConfinedStart =
  { ok: true; confined: Confined } | { ok: false; aborted: boolean; message: string };

const ABORTED: ConfinedStart = { ok: false, aborted: true, message: "interrupted" };

/**
 * Starts `cmd` (never throws for a refusal: the sandbox is `on` and bwrap does not work, or the
 * signal fired first). A spawn error arrives as the child's "error" event.
 */
export async function runConfined(cmd: ConfinedCommand): Promise<ConfinedStart> {
  if (cmd.signal?.aborted) return ABORTED;
  if (cmd.warmOwner !== undefined && "command" in cmd.run) {
    const warm = await warmLaunch(cmd.settings, cmd.cwd, cmd.run.command, cmd.warmOwner);
    if (warm) {
      if (cmd.signal?.aborted) {
        warm.release(false); // nothing ran; its standby (if any) goes with the sandbox
        return ABORTED;
      }
      return { ok: true, confined: startWarm(cmd, warm) };
    }
  }
  // The watchdog runs `$1` with eval: a command as it is, a program as `exec "$@"`.
  const tail = "command" in cmd.run ? [cmd.run.command] : ['exec "$@"', ...cmd.run.argv];
  const launch = await shellLaunch(cmd.settings, cmd.cwd, [
    "bash",
    "-c",
    LIFELINE_SCRIPT,
    "bash",
    ...tail,
  ]);
  if (!launch.ok) return { ok: false, aborted: false, message: launch.message };
  if (cmd.signal?.aborted) return ABORTED;
  const child = spawn(launch.file, launch.args, {
    cwd: cmd.cwd,
    env: { ...launch.env, ...cmd.env }, // the allowlist (env.ts), never warren's secrets
    detached: true, // its own process group, so one kill reaches everything it started
    stdio: [cmd.stdin ? "pipe" : "ignore", "pipe", "pipe", "pipe"],
  });
  const lifeline = child.stdio[3] as NodeJS.WritableStream & { destroy(): void };
  lifeline.on("error", () => undefined); // the watchdog is gone (killed with the group)
  const guard = guardOf(child, cmd);
  return {
    ok: true,
    confined: {
      child,
      sandboxed: launch.sandboxed,
      state: guard.state,
      begin: () => undefined,
      // The command is over: the watchdog goes without killing anything.
      exited: () => lifeline.end("done\n"),
      finish() {
        guard.dispose();
        lifeline.destroy();
      },
      kill: () => killGroup(child),
    },
  };
}

/**
 * In a warm sandbox warren's death takes the whole sandbox down (bwrap's --die-with-parent), so
 * no watchdog; whatever the call left running is killed with the sandbox.
 */
function startWarm(cmd: ConfinedCommand, warm: WarmLaunch): Confined {
  // A warm sandbox's standby bash is already running (same env, cwd, own group): use it.
  const child =
    warm.standby ??
    spawn(warm.file, warm.args, {
      cwd: cmd.cwd,
      env: { ...warm.env, ...cmd.env },
      detached: true,
      stdio: [cmd.stdin ? "pipe" : "ignore", "pipe", "pipe"],
    });
  if (warm.standby) {
    child.ref();
    for (const stream of child.stdio) (stream as { ref?: () => void } | null)?.ref?.();
  }
  const guard = guardOf(child, cmd);
  let released = false;
  return {
    child,
    sandboxed: true,
    state: guard.state,
    begin() {
      if (warm.input === undefined) return;
      // The standby reads the command from fd 3 (its output is now being read).
      const input = child.stdio[3] as NodeJS.WritableStream;
      input.on("error", () => undefined);
      input.end(warm.input);
    },
    exited: () => warm.afterExit(),
    finish(clean) {
      if (released) return;
      released = true;
      guard.dispose();
      // Back to the pool only after a call that ended by itself and closed its output.
      warm.release(clean && !guard.state.timedOut && !guard.state.aborted);
    },
    kill: () => killGroup(child),
  };
}

function guardOf(child: ChildProcess, cmd: ConfinedCommand): GroupGuard {
  return guardGroup(child, cmd.timeoutMs, cmd.signal);
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // The group is already gone.
  }
}
