// Running one hook command (hooks/run.ts) with real scripts: the event on stdin, the agent's
// working directory, stdout and stderr apart, and a timeout or an abort that kills everything the
// hook started, so nothing hangs on a hook.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runHook } from "../../src/hooks/run.js";
import { EMPTY_SHELL_ENV } from "../../src/sandbox/env.js";
import { DEFAULT_SANDBOX, type ShellSettings } from "../../src/sandbox/settings.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "warren-hook-run-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const OFF: ShellSettings = { sandbox: { ...DEFAULT_SANDBOX, mode: "off" }, env: EMPTY_SHELL_ENV };

function script(name: string, body: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, `#!/usr/bin/env bash\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

const options = (extra: { timeoutSeconds?: number; signal?: AbortSignal } = {}) => ({
  cwd: dir,
  projectDir: dir,
  shell: OFF,
  signal: extra.signal ?? new AbortController().signal,
  timeoutSeconds: extra.timeoutSeconds ?? 30,
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 250; i++) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

describe("runHook", () => {
  it("gives the event on stdin, runs in the cwd, keeps stdout and stderr apart", async () => {
    const hook = script(
      "h.sh",
      `cat > got.json; pwd; echo "$CLAUDE_PROJECT_DIR"; echo oops >&2; exit 3`,
    );
    const run = await runHook(hook, '{"tool_name":"bash"}', options());
    expect(run).toEqual({ kind: "exited", code: 3, stdout: `${dir}\n${dir}\n`, stderr: "oops\n" });
    expect(readFileSync(path.join(dir, "got.json"), "utf8")).toBe('{"tool_name":"bash"}');
  });

  it("a hook that never reads stdin is fine (exit 0)", async () => {
    const run = await runHook("true", "x".repeat(1 << 20), options());
    expect(run).toMatchObject({ kind: "exited", code: 0 });
  });

  it("a timeout kills the hook and what it started, and says so", async () => {
    const hook = script("slow.sh", `sleep 300 & echo $! > bg.pid; sleep 300`);
    const run = await runHook(hook, "{}", options({ timeoutSeconds: 1 }));
    expect(run).toEqual({ kind: "timeout", seconds: 1 });
    const pid = Number(readFileSync(path.join(dir, "bg.pid"), "utf8"));
    expect(await until(() => !alive(pid))).toBe(true);
  });

  it("an abort kills it at once", async () => {
    const hook = script("slow.sh", `echo $$ > me.pid; sleep 300`);
    const controller = new AbortController();
    const running = runHook(hook, "{}", options({ signal: controller.signal }));
    expect(await until(() => existsSync(path.join(dir, "me.pid")))).toBe(true);
    controller.abort();
    expect(await running).toEqual({ kind: "aborted" });
    const pid = Number(readFileSync(path.join(dir, "me.pid"), "utf8"));
    expect(await until(() => !alive(pid))).toBe(true);
  });

  it("caps what it keeps of a flood of output", async () => {
    const run = await runHook("head -c 5000000 /dev/zero | tr '\\0' x", "{}", options());
    expect(run.kind === "exited" && run.stdout.length).toBe(64 * 1024);
  });

  it("a command that cannot run is a failure, not a throw", async () => {
    const run = await runHook("/nonexistent/hook", "{}", options());
    expect(run).toMatchObject({ kind: "exited", code: 127 });
    const refused = await runHook("true", "{}", {
      ...options(),
      shell: {
        sandbox: { ...DEFAULT_SANDBOX, mode: "on", bwrap: "/nonexistent/bwrap" },
        env: EMPTY_SHELL_ENV,
      },
    });
    expect(refused).toMatchObject({
      kind: "failed",
      message: expect.stringMatching(/sandbox is required/),
    });
  });
});
