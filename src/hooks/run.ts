// Runs one hook command as the agent's `bash` runs: `bash -c` in the agent's working directory,
// inside the same sandbox (src/sandbox/: sandbox on/auto/off) with the same allowlisted
// environment (no API key, no database URL), in a process group of its own that is killed whole on
// timeout, abort, or warren's death (the lifeline of sandbox/group.ts). The event goes in as JSON on
// stdin, never as shell text; stdout and stderr come back separately, capped.
import { spawn } from "node:child_process";
import { guardGroup, LIFELINE_SCRIPT } from "../sandbox/group.js";
import { shellLaunch } from "../sandbox/launch.js";
import type { ShellSettings } from "../sandbox/settings.js";
import type { HookRun } from "./decision.js";

/** Kept of each of stdout and stderr; a hook's answer is small, its chatter is dropped. */
const OUTPUT_MAX = 64 * 1024;
/** After the hook exits, how long its pipes may stay open (a background job it left holds them). */
const EXIT_GRACE_MS = 250;

export interface HookRunOptions {
  cwd: string;
  shell?: ShellSettings;
  signal: AbortSignal;
  timeoutSeconds: number;
}

/** Runs `command` with `input` on its stdin; never throws. */
export async function runHook(
  command: string,
  input: string,
  options: HookRunOptions,
): Promise<HookRun> {
  if (options.signal.aborted) return { kind: "aborted" };
  let launch;
  try {
    launch = await shellLaunch(options.shell, options.cwd, [
      "bash",
      "-c",
      LIFELINE_SCRIPT,
      "bash",
      command,
    ]);
  } catch (err) {
    return { kind: "failed", message: (err as Error).message };
  }
  if (!launch.ok) return { kind: "failed", message: launch.message };
  // Claude Code's variable, so a copied `"$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh` finds its script.
  launch.env.CLAUDE_PROJECT_DIR = options.cwd;
  if (options.signal.aborted) return { kind: "aborted" };
  const ready = launch;
  return new Promise<HookRun>((resolve) => {
    let child;
    try {
      child = spawn(ready.file, ready.args, {
        cwd: options.cwd,
        env: ready.env, // the allowlist (sandbox/env.ts), never warren's secrets
        detached: true, // its own process group: one kill reaches all it started
        stdio: ["pipe", "pipe", "pipe", "pipe"],
      });
    } catch (err) {
      resolve({ kind: "failed", message: (err as Error).message });
      return;
    }
    const stdin = child.stdin!;
    const stdout = child.stdout!;
    const stderr = child.stderr!;
    const lifeline = child.stdio[3] as NodeJS.WritableStream & { destroy(): void };
    lifeline.on("error", () => undefined);
    // A hook that does not read its stdin (or exits first) closes the pipe: not a failure.
    stdin.on("error", () => undefined);
    let out = "";
    let err = "";
    stdout.setEncoding("utf8").on("data", (t: string) => {
      if (out.length < OUTPUT_MAX) out += t.slice(0, OUTPUT_MAX - out.length);
    });
    stderr.setEncoding("utf8").on("data", (t: string) => {
      if (err.length < OUTPUT_MAX) err += t.slice(0, OUTPUT_MAX - err.length);
    });
    let code: number | null = null;
    let settled = false;
    let grace: NodeJS.Timeout | undefined;
    const guard = guardGroup(child, options.timeoutSeconds * 1000, options.signal);
    const finish = (run: HookRun) => {
      if (settled) return;
      settled = true;
      guard.dispose();
      clearTimeout(grace);
      stdin.destroy();
      stdout.destroy();
      stderr.destroy();
      lifeline.destroy();
      resolve(run);
    };
    const ended = (): HookRun => {
      if (guard.state.aborted) return { kind: "aborted" };
      if (guard.state.timedOut) return { kind: "timeout", seconds: options.timeoutSeconds };
      return { kind: "exited", code: code ?? 1, stdout: out, stderr: err };
    };
    child.on("error", (e) => finish({ kind: "failed", message: e.message }));
    child.on("exit", (c, signal) => {
      code = c ?? (signal ? 128 : 1);
      lifeline.end("done\n");
      grace = setTimeout(() => finish(ended()), EXIT_GRACE_MS);
    });
    child.on("close", () => finish(ended()));
    stdin.end(input);
  });
}
