// Issue 12, "the network goes silent past the lease": `warren -p` reaches Postgres through a proxy
// that stops forwarding (connections stay open) for 14 s, lease 4 s, while a `warren worker` with
// a direct connection takes the work over; then the network heals and -p's late replies and
// writes arrive. Protects fencing: a process that lost its lease writes nothing (the lease epoch
// checked on every write of a turn), and what it committed just before is found by whoever goes
// on, so each of the 30 mails reaches the root's model exactly once and nothing is stuck.
import type { ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { sleep } from "../support/agents.js";
import type { DropPolicy } from "../support/pg-proxy.js";
import { usePgProxy } from "../support/use-pg-proxy.js";
import { startWarren, warrenEnv, type WarrenRun } from "../support/warren.js";
import { useE2E } from "../runtime/e2e-support.js";
import { expectStormExactlyOnce, scriptMailStorm, stormStart } from "./mail-storm.js";

const e2e = useE2E();
const proxy = usePgProxy(() => e2e.db().$client.options.connectionString!);
const SILENCE_MS = 14_000;
const LEASE = { WARREN_LEASE_SECONDS: "4" };
let worker: { child: ChildProcess; done: Promise<WarrenRun> } | undefined;

afterEach(async () => {
  if (worker && worker.child.exitCode === null) worker.child.kill("SIGKILL");
  worker = undefined;
});

/** When the silence begins: after a delay, or at a committed write (its reply kept till resume). */
type Onset = { afterMs: number } | { atCommit: DropPolicy };

async function stormThroughSilence(onset: Onset): Promise<void> {
  scriptMailStorm(e2e.fake(), { waitSeconds: 30, reaskFirst: true });
  const url = e2e.db().$client.options.connectionString!;
  const since = await stormStart(e2e.db());
  const started = Date.now();
  if ("atCommit" in onset) proxy().dropCommits({ ...onset.atCommit, max: 1, action: "silence" });
  const prompt = e2e.prompt("collect the reports", {
    timeout: 50,
    env: { DATABASE_URL: proxy().urlFor(url), WARREN_WORKER_THREADS: "2", ...LEASE },
  });

  // The onset; a commit that never comes (a renamed statement) still silences, later, and says so.
  const context: string[] = [];
  const deadline = Date.now() + ("afterMs" in onset ? onset.afterMs : 8_000);
  while (Date.now() < deadline && proxy().dropped().length === 0) await sleep(20);
  if (proxy().dropped().length === 0) {
    if ("atCommit" in onset) context.push("the onset commit never came: silenced at 8 s instead");
    proxy().silence();
  }
  context.push(
    `silent from ${Date.now() - started} ms for ${SILENCE_MS} ms`,
    ...proxy()
      .dropped()
      .map((d) => `  at the commit of: ${d.statements.join(" ; ")}`),
  );
  worker = startWarren(
    ["worker"],
    warrenEnv({ databaseUrl: url, modelUrl: e2e.fake().baseURL, extra: LEASE }),
  );
  await sleep(SILENCE_MS);
  proxy().resume();

  const run = await prompt;
  const elapsedMs = Date.now() - started;
  worker.child.kill("SIGTERM");
  const stopped = await Promise.race([worker.done, sleep(10_000).then(() => undefined)]);
  expect(stopped, "the worker did not stop within 10 s of SIGTERM").toBeDefined();
  await expectStormExactlyOnce(
    e2e.db(),
    e2e.fake(),
    { ...run, elapsedMs },
    // A response in flight when -p lost its lease is lost with it; the worker asks again.
    {
      maxMs: 45_000,
      since,
      context,
      stderr: [stopped!.stderr],
      modelCalls: "again-after-takeover",
    },
  );
}

describe("silent past the lease while a worker takes over", { timeout: 120_000 }, () => {
  it("silent from 2.5 s into the run (as in the issue)", () =>
    stormThroughSilence({ afterMs: 2_500 }));

  it("silent right after the commit of the root's 10th consumed mail, before -p hears of it", () =>
    stormThroughSilence({
      atCommit: { statement: /update\s+"?mail"?\s+set\s+"?consumed_at/i, skip: 9 },
    }));

  it("silent right after the commit of a child's 13th sent mail", () =>
    stormThroughSilence({ atCommit: { statement: /insert\s+into\s+"?mail"?\s/i, skip: 12 } }));
});
