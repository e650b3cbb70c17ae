// Runs one hook command as the agent's `bash` runs: `bash -c` in the agent's working directory,
// inside the same sandbox (src/sandbox/: sandbox on/auto/off) with the same allowlisted
// environment (no API key, no database URL), in a process group of its own that is killed whole on
// timeout, abort, or warren's death (the lifeline of sandbox/group.ts). The event goes in as JSON on
// stdin, never as shell text; stdout and stderr come back separately, capped. A hook the person's
// config marks `"sandbox": false` runs unconfined (still with the allowlisted environment).
import { runConfined } from "../sandbox/run.js";
import { EMPTY_SHELL_ENV } from "../sandbox/env.js";
import { DEFAULT_SANDBOX, type ShellSettings } from "../sandbox/settings.js";
import type { HookRun } from "./decision.js";

/** Kept of each of stdout and stderr; a hook's answer is small, its chatter is dropped. */
const OUTPUT_MAX = 64 * 1024;
/** After the hook exits, how long its pipes may stay open (a background job it left holds them). */
const EXIT_GRACE_MS = 250;

export interface HookRunOptions {
  cwd: string;
  /** `$CLAUDE_PROJECT_DIR`: the project's root (projectDir in hooks/config.ts), not `cwd`. */
  projectDir: string;
  shell?: ShellSettings;
  signal: AbortSignal;
  timeoutSeconds: number;
  /** false: the person's config runs this hook unconfined (hooks come only from that file). */
  sandbox?: boolean;
}

/** Runs `command` with `input` on its stdin; never throws. */
export async function runHook(
  command: string,
  input: string,
  options: HookRunOptions,
): Promise<HookRun> {
  let started;
  try {
    started = await runConfined({
      settings: confinement(options),
      cwd: options.cwd,
      run: { command },
      // Claude Code's variable, so a copied `"$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh` finds its
      // script from any subfolder the agent works in.
      env: { CLAUDE_PROJECT_DIR: options.projectDir },
      stdin: true,
      timeoutMs: options.timeoutSeconds * 1000,
      signal: options.signal,
    });
  } catch (err) {
    return { kind: "failed", message: (err as Error).message };
  }
  if (!started.ok) {
    return started.aborted ? { kind: "aborted" } : { kind: "failed", message: started.message };
  }
  const confined = started.confined;
  const { child, state } = confined;
  return new Promise<HookRun>((resolve) => {
    const stdin = child.stdin!;
    const stdout = child.stdout!;
    const stderr = child.stderr!;
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
    const finish = (run: HookRun) => {
      if (settled) return;
      settled = true;
      clearTimeout(grace);
      stdin.destroy();
      stdout.destroy();
      stderr.destroy();
      confined.finish(false);
      resolve(run);
    };
    const ended = (): HookRun => {
      if (state.aborted) return { kind: "aborted" };
      if (state.timedOut) return { kind: "timeout", seconds: options.timeoutSeconds };
      return { kind: "exited", code: code ?? 1, stdout: out, stderr: err };
    };
    child.on("error", (e) => finish({ kind: "failed", message: e.message }));
    child.on("exit", (c, signal) => {
      code = c ?? (signal ? 128 : 1);
      confined.exited();
      grace = setTimeout(() => finish(ended()), EXIT_GRACE_MS);
    });
    child.on("close", () => finish(ended()));
    confined.begin();
    stdin.end(input);
  });
}

/** The agent's sandbox, or none for a hook the person's config marks `"sandbox": false`. */
function confinement(options: HookRunOptions): ShellSettings | undefined {
  if (options.sandbox !== false) return options.shell;
  const shell = options.shell ?? { sandbox: DEFAULT_SANDBOX, env: EMPTY_SHELL_ENV };
  return { ...shell, sandbox: { ...shell.sandbox, mode: "off" } };
}
