// Issue 12, "the reply to a committed write is lost": `warren -p` reaches Postgres through a proxy
// that cuts the connection right after the server commits a write, before the client hears so.
// Protects exactly-once under unknown outcomes: a retried write must find what the first attempt
// committed (idempotency keys), so the 6×5 mail storm still ends with every mail sent once,
// consumed once and shown to the root's model once, one assistant event per model response, no
// worker thread dead, nothing stuck — and `-p` exits 0 with the root's answer.
import { describe, it } from "vitest";
import type { DropPolicy } from "../support/pg-proxy.js";
import { usePgProxy } from "../support/use-pg-proxy.js";
import { useE2E } from "../runtime/e2e-support.js";
import { expectStormExactlyOnce, scriptMailStorm, stormStart } from "./mail-storm.js";

const e2e = useE2E();
const proxy = usePgProxy(() => e2e.db().$client.options.connectionString!);

async function stormThrough(policy: DropPolicy): Promise<void> {
  scriptMailStorm(e2e.fake(), { waitSeconds: 15 });
  proxy().dropCommits(policy);
  const since = await stormStart(e2e.db());
  const started = Date.now();
  const url = e2e.db().$client.options.connectionString!;
  const run = await e2e.prompt("collect the reports", {
    // A healthy run takes a few seconds; a stuck one fails here with its state listed.
    timeout: 45,
    env: {
      DATABASE_URL: proxy().urlFor(url),
      WARREN_LEASE_SECONDS: "5",
      WARREN_WORKER_THREADS: "2",
    },
  });
  const dropped = proxy().dropped();
  await expectStormExactlyOnce(
    e2e.db(),
    e2e.fake(),
    { ...run, elapsedMs: Date.now() - started },
    {
      maxMs: 40_000,
      since,
      context: [
        `dropped the reply of ${dropped.length} of ${proxy().commits()} committed writes:`,
        ...dropped.map((d) => `  ${d.statements.join(" ; ")}`),
      ],
    },
  );
}

describe("lost replies to committed writes", () => {
  it("every 6th committed write, 8 at most (as in the issue): a -p mail storm ends exactly once", () =>
    stormThrough({ skip: 4, every: 6, max: 8 }));

  it("every 3rd commit that records an event (effects, waits, responses): exactly once", () =>
    stormThrough({ statement: /insert into "?events"?/i, skip: 1, every: 3, max: 8 }));
});
