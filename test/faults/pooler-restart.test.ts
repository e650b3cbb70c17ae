// The pooler itself fails (issue 30 item 4, SPEC §5): a `-p` fan-in through a real PgBouncer in
// transaction mode (WARREN_POOLER=transaction) while PgBouncer is killed (SIGKILL: every client
// and server connection cut) and started again, as its restart by a supervisor would. The run
// rides it out like any outage and everything happens exactly once, LISTEN off and LISTEN direct.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useE2E } from "../runtime/e2e-support.js";
import {
  PGBOUNCER_MISSING,
  pgbouncerPath,
  startPgbouncer,
  type Pgbouncer,
} from "../support/pgbouncer.js";
import { childrenAsleep, expectExactlyOnce, scriptSleepyFanIn } from "./sleepy-fan-in.js";

const installed = pgbouncerPath() !== undefined;
if (!installed) process.stderr.write(`${PGBOUNCER_MISSING}\n`);

describe.skipIf(!installed)("PgBouncer killed and restarted during a fan-in", () => {
  const e2e = useE2E();
  let bouncer: Pgbouncer;
  const direct = () => e2e.db().$client.options.connectionString!;

  beforeAll(async () => {
    bouncer = await startPgbouncer(direct());
  });
  afterAll(async () => {
    await bouncer?.stop();
  });

  async function throughRestart(listen: "off" | "direct") {
    scriptSleepyFanIn(e2e.fake(), { sleepSeconds: 3, waitSeconds: 60 });
    const run = e2e.prompt("fan out", {
      timeout: 90,
      env: {
        DATABASE_URL: bouncer.urlFor(direct()),
        WARREN_POOLER: "transaction",
        WARREN_LISTEN_URL: listen === "direct" ? direct() : "off",
      },
    });
    await childrenAsleep(e2e.db());
    await bouncer.restart();
    const result = await run;
    expect(result.code, result.stderr).toBe(0);
    expect(result.json?.text).toBe("all reported");
    expect(result.stderr).not.toMatch(/Failed query|at .+\.js:\d+/);
    await expectExactlyOnce(e2e.db(), result.json!.tree_id);
  }

  it("LISTEN off: the run finishes, every mail exactly once", () => throughRestart("off"));
  it("LISTEN direct: the run finishes, every mail exactly once", () => throughRestart("direct"));
});
