// Issue 28 item 6, "effects bound to the lease" (SPEC §5): `warren -p` reaches Postgres through a
// proxy that goes silent (connections open, nothing forwarded) while a long `bash` command is in
// flight, lease 4 s; a `warren worker` with a direct connection takes the agent over once the
// lease expires, and the model runs the same command again. The partitioned process must stop
// its command before its lease can expire: the command never runs in two places at once.
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sleep } from "../support/agents.js";
import { usePgProxy } from "../support/use-pg-proxy.js";
import { startWarren, warrenEnv, type WarrenRun } from "../support/warren.js";
import { after, isFirst, useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();
const proxy = usePgProxy(() => e2e.db().$client.options.connectionString!);
const LEASE = { WARREN_LEASE_SECONDS: "4" };
const SILENCE_MS = 14_000;
let worker: { child: ChildProcess; done: Promise<WarrenRun> } | undefined;

afterEach(() => {
  if (worker && worker.child.exitCode === null) worker.child.kill("SIGKILL");
  worker = undefined;
});

/** Each run's [first, last] line time (ms), by the token of the run that wrote it. */
function intervals(log: string): { pid: string; from: number; to: number }[] {
  const byPid = new Map<string, { pid: string; from: number; to: number }>();
  for (const line of log.trim().split("\n")) {
    const [pid, ns] = line.split(" ");
    if (!pid || !ns) continue;
    const at = Number(BigInt(ns) / 1_000_000n);
    const seen = byPid.get(pid);
    if (!seen) byPid.set(pid, { pid, from: at, to: at });
    else seen.to = Math.max(seen.to, at);
  }
  return [...byPid.values()].sort((a, b) => a.from - b.from);
}

describe("a process cut off from the database", { timeout: 120_000 }, () => {
  it("stops its bash before its lease expires: a command never runs twice at once", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "warren-lease-effects-"));
    const log = path.join(dir, "runs.log");
    // The log lies outside the agent's working directory: writable through both processes'
    // sandboxes.
    const configFile = path.join(dir, "config.json");
    writeFileSync(configFile, JSON.stringify({ sandbox_writable: [dir] }));
    const config = { WARREN_CONFIG: configFile };
    // About 10 s: a line every 50 ms with a token of this run and the time in nanoseconds (not
    // the shell's pid: under the sandbox each run has a PID namespace of its own, pids alike).
    const command = `run=$RANDOM$RANDOM; for i in $(seq 1 200); do echo "$run $(date +%s%N)" >> ${log}; sleep 0.05; done`;
    const bash = { toolCalls: [{ name: "bash", arguments: { command, timeout: 60 } }] };
    e2e.fake().script([
      { agent: "root", match: isFirst, reply: bash },
      // After the takeover the first run is "interrupted": the model runs it again.
      { agent: "root", match: after("bash"), reply: bash },
      { agent: "root", match: after("bash"), reply: { text: "done" } },
    ]);
    const url = e2e.db().$client.options.connectionString!;
    const prompt = e2e.prompt("run it", {
      timeout: 60,
      env: { DATABASE_URL: proxy().urlFor(url), WARREN_WORKER_THREADS: "1", ...LEASE, ...config },
    });
    const deadline = Date.now() + 20_000;
    while (!existsSync(log) && Date.now() < deadline) await sleep(20);
    expect(existsSync(log), "the command never started").toBe(true);
    await sleep(300);
    proxy().silence();
    const silentAt = Date.now();
    worker = startWarren(
      ["worker"],
      warrenEnv({ databaseUrl: url, modelUrl: e2e.fake().baseURL, extra: { ...LEASE, ...config } }),
    );
    await sleep(SILENCE_MS);
    proxy().resume();
    const run = await prompt;
    worker.child.kill("SIGTERM");
    await Promise.race([worker.done, sleep(10_000)]);

    const runs = intervals(readFileSync(log, "utf8"));
    const shown = JSON.stringify(
      runs.map((r) => ({ pid: r.pid, from: r.from - silentAt, to: r.to - silentAt })),
    );
    expect(runs.length, `runs (ms from the silence): ${shown}; -p: ${run.stderr}`).toBe(2);
    for (let i = 1; i < runs.length; i++) {
      expect(runs[i]!.from, `overlapping runs (ms from the silence): ${shown}`).toBeGreaterThan(
        runs[i - 1]!.to,
      );
    }
    // Stopped before the lease (4 s) could expire, counted from the last renewal before silence.
    expect(runs[0]!.to - silentAt, shown).toBeLessThan(4_000);
  });
});
