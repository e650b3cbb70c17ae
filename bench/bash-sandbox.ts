// What the sandbox costs a `bash` call: the real bash tool running `true` in bubblewrap, the same
// tool unconfined (sandbox "off"), and a plain spawn of `bash -c true`, interleaved call by call
// so load drift hits all three alike. Needs no database (the context's is unused). Sandboxed
// calls run in a warm sandbox (sandbox.ts), where a standby bash entered after the previous call
// takes the command; a fourth series changes the environment on every call, so its standby is
// never used: the cost of entering the sandbox on the call's own path.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { bashTool } from "../src/tools/bash.js";
import { EMPTY_SHELL_ENV } from "../src/sandbox/env.js";
import { probeBwrap } from "../src/sandbox/launch.js";
import { DEFAULT_SANDBOX, type ShellSettings } from "../src/sandbox/settings.js";
import { closeWarmSandboxes } from "../src/sandbox/warm.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { nowMs, percentile } from "./stats.js";

const CALLS = 200;

function plainSpawn(cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", "true"], { cwd, stdio: "ignore", detached: true });
    child.on("error", reject);
    child.on("close", () => resolve());
  });
}

export async function bashSandbox(context: BenchContext): Promise<BenchRow[]> {
  const { signal, log } = context;
  const probe = await probeBwrap("bwrap");
  if (!probe.ok) {
    log(`bash-sandbox: skipped, ${probe.reason}`);
    return [];
  }
  const cwd = await mkdtemp(path.join(os.tmpdir(), "warren-bench-bash-"));
  const settings = (mode: "on" | "off"): ShellSettings => ({
    sandbox: { ...DEFAULT_SANDBOX, mode },
    env: EMPTY_SHELL_ENV,
  });
  const on = settings("on");
  const fresh = (i: number): ShellSettings => ({
    ...on,
    env: { set: { BENCH_CALL: String(i) }, pass: [] },
  });
  const off = settings("off");
  // The network off: its own namespace, and apply-seccomp refusing Unix sockets (sandbox/seccomp.ts).
  const noNet: ShellSettings = { ...on, sandbox: { ...on.sandbox, network: false } };
  // Its own directory, so its sandbox (and standby) is not the first series'.
  const other = await mkdtemp(path.join(os.tmpdir(), "warren-bench-bash-"));
  const call = async (shell: ShellSettings, dir = cwd) => {
    const started = nowMs();
    const outcome = await bashTool.run({ command: "true" }, { cwd: dir, signal, shell });
    if (!outcome.ok) throw new Error(`bash failed: ${outcome.error.message}`);
    return nowMs() - started;
  };
  const sandboxed: number[] = [];
  const entered: number[] = [];
  const unconfined: number[] = [];
  const offline: number[] = [];
  const plain: number[] = [];
  try {
    for (let i = 0; i < 10; i++) {
      await Promise.all([call(on), call(off), call(noNet), plainSpawn(cwd)]); // warm-up
    }
    for (let i = 0; i < CALLS && !signal.aborted; i++) {
      sandboxed.push(await call(on));
      entered.push(await call(fresh(i), other));
      unconfined.push(await call(off));
      offline.push(await call(noNet));
      const started = nowMs();
      await plainSpawn(cwd);
      plain.push(nowMs() - started);
    }
  } finally {
    closeWarmSandboxes();
    await rm(cwd, { recursive: true, force: true });
    await rm(other, { recursive: true, force: true });
  }
  const p50 = (xs: number[]) => percentile(xs, 50);
  log(
    `bash-sandbox: p50 sandboxed ${p50(sandboxed).toFixed(2)} ms, without its standby ${p50(entered).toFixed(2)} ms, unconfined ${p50(unconfined).toFixed(2)} ms, network off ${p50(offline).toFixed(2)} ms, plain spawn ${p50(plain).toFixed(2)} ms`,
  );
  return [
    row("bash call p50, sandboxed", p50(sandboxed), "ms", "plain spawn of bash -c", p50(plain)),
    row(
      "bash call p50, sandboxed, standby unused",
      p50(entered),
      "ms",
      "the tool unconfined",
      p50(unconfined),
    ),
    row("bash call p50, unconfined", p50(unconfined), "ms", "plain spawn of bash -c", p50(plain)),
    row("bash call p50 added by the sandbox", p50(sandboxed) - p50(unconfined), "ms", "goal", 5),
    row(
      "bash call p50 added by the sandbox, network off (seccomp)",
      p50(offline) - p50(unconfined),
      "ms",
      "goal",
      5,
    ),
  ];
}
