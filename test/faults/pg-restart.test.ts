// Postgres stopped and started under traffic (SPEC §5), for real: the test's own embedded
// Postgres (its data in a temporary directory) is stopped with a fast shutdown while the three
// children of a `warren -p` fan-in run `bash sleep`, stays down a moment, and is started again on
// the same port and data. The run carries on: same answer, every mail exactly once, every agent
// idle, one "database unreachable …; retrying" line and never SQL text.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, createDb, type Db } from "../../src/db/client.js";
import { embeddedStatus, ensureEmbedded, stopEmbedded } from "../../src/db/embedded.js";
import { migrate } from "../../src/db/migrate.js";
import { sleep } from "../support/agents.js";
import { useE2E } from "../runtime/e2e-support.js";
import { childrenAsleep, expectExactlyOnce, scriptSleepyFanIn } from "./sleepy-fan-in.js";

const e2e = useE2E();
let home: string;
let url: string;
let db: Db;
const notices: string[] = [];

beforeAll(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), "warren-restart-"));
  // mkdtemp makes 0700; under root the server runs as `postgres`, which must traverse it.
  await fs.chmod(home, 0o755);
  url = await ensureEmbedded(home, { notice: (line) => notices.push(line) });
  await migrate(url);
  db = createDb(url);
});

afterAll(async () => {
  if (db) await closeDb(db);
  if (home) {
    await stopEmbedded(home).catch(() => {});
    await fs.rm(home, { recursive: true, force: true });
  }
});

describe("Postgres stopped and started under traffic", () => {
  it("a -p fan-in carries on: same answer, everything exactly once", async () => {
    scriptSleepyFanIn(e2e.fake(), { sleepSeconds: 2, waitSeconds: 90 });

    const run = e2e.prompt("fan out", {
      timeout: 120,
      env: { DATABASE_URL: url, WARREN_LEASE_SECONDS: "10" },
    });
    await childrenAsleep(db);

    const { port } = await embeddedStatus(home);
    const stoppedAt = Date.now();
    expect(await stopEmbedded(home)).toBe(true); // pg_ctl stop -m fast
    await sleep(3_000); // the outage itself: the children's `bash` ends meanwhile
    await ensureEmbedded(home, { notice: (line) => notices.push(line) });
    const downMs = Date.now() - stoppedAt;
    expect((await embeddedStatus(home)).port).toBe(port);
    const result = await run;
    process.stderr.write(`postgres restart: down ${(downMs / 1000).toFixed(1)} s\n`);

    expect(result.stderr).not.toMatch(/Failed query|select |insert |update /i);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json?.text).toBe("all reported");
    // The outage was seen, in one line; if it outlasted most of a lease, the turns it stopped
    // (effects bound to the lease) in one more; nothing else was said.
    const lines = result.stderr.split("\n").filter((l) => l.trim());
    expect(lines[0], result.stderr).toMatch(/^warren: database unreachable \(.+\); retrying$/);
    expect(lines.slice(1), result.stderr).toEqual(
      lines.length > 1
        ? [
            expect.stringMatching(
              /^warren: (agent \w{8}|\d+ agents): lease not renewed for \d+ s; /,
            ),
          ]
        : [],
    );

    await expectExactlyOnce(db, result.json!.tree_id);
  });
});
