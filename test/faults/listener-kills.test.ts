// The listener killed repeatedly under traffic (SPEC §5, §8): while one `warren worker` runs a
// 37-agent tree of forks and fan-in waits, every LISTEN backend of the database is terminated
// every 250 ms. NOTIFYs sent while a listener is down are lost; the bus reconnects and tells every
// waiter to look again (RECONNECTED), so no mail waits for the slow safety re-check. Afterwards:
// every agent, model answer and mail exactly once, and no mail took long to be taken.
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { sleep } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { startWarren, warrenEnv } from "../support/warren.js";
import { createTreeScript, treeNames } from "../scale/tree-script.js";
import { verifyTree } from "../scale/verify-tree.js";
import { until } from "./sleepy-fan-in.js";

const database = useTestDatabase();
const SHAPE = [6, 5]; // 1 + 6 + 30 = 37 agents, 7 of them parents that wait
const KILL_EVERY_MS = 250;

let fake: FakeModel | undefined;
let worker: ReturnType<typeof startWarren> | undefined;
afterEach(async () => {
  if (worker && worker.child.exitCode === null) worker.child.kill("SIGKILL");
  await fake?.close();
});

describe("the listener killed repeatedly under traffic", () => {
  it("loses no mail and leaves none waiting for the safety re-check", async () => {
    const { db, url } = database();
    const script = createTreeScript(SHAPE);
    fake = await startFakeModel();
    // Model answers take a moment, so the run lasts through many kills.
    fake.script({ times: Infinity, reply: (req) => ({ ...script.reply(req), delayMs: 150 }) });
    const cwd = mkdtempSync(path.join(os.tmpdir(), "warren-listener-kills-"));
    const env = warrenEnv({
      databaseUrl: url,
      modelUrl: fake.baseURL,
      extra: { WARREN_CONCURRENCY: "8", WARREN_LEASE_SECONDS: "10" },
    });
    worker = startWarren(["worker"], env);
    const root = await createTree(db, { prompt: "build the tree", cwd });

    let kills = 0;
    let running = true;
    const killer = (async () => {
      while (running) {
        const killed = await db.execute<{ n: number }>(sql`
          select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
           where application_name = 'warren-listen' and datname = current_database()`);
        kills += killed.rows[0]!.n;
        await sleep(KILL_EVERY_MS);
      }
    })();
    try {
      await until(
        async () => {
          const rows = await db.execute<{ done: boolean }>(sql`
            select bool_and(state = 'idle') and count(*) = ${treeNames(SHAPE).length} as done
              from agents where tree_id = ${root.id}`);
          return rows.rows[0]!.done === true;
        },
        "the tree to finish",
        90_000,
      );
    } finally {
      running = false;
      await killer;
    }
    worker.child.kill("SIGTERM");
    const stopped = await worker.done;
    expect(stopped.stderr).not.toMatch(/Failed query|select |insert |update /i);

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const verdict = await verifyTree(client, {
        treeId: root.id,
        shape: SHAPE,
        stageLog: script.log,
        victims: [],
      });
      expect(verdict.problems).toEqual([]);
    } finally {
      await client.end();
    }
    expect(script.anomalies).toEqual([]);
    expect(fake.unmatched).toEqual([]);

    // Every mail was taken soon after it was sent, though many NOTIFYs were lost to the kills:
    // a missed one would wait for the 15 s safety re-check.
    const delays = await db.execute<{ n: number; unconsumed: number; slowest: number }>(sql`
      select count(*)::int as n, count(*) filter (where consumed_at is null)::int as unconsumed,
             coalesce(max(extract(epoch from consumed_at - created_at)), 0)::float as slowest
        from mail where tree_id = ${root.id}`);
    const { n, unconsumed, slowest } = delays.rows[0]!;
    process.stderr.write(
      `listener kills: ${kills} LISTEN backends terminated; ${n} mails, slowest taken after ` +
        `${slowest.toFixed(2)} s\n`,
    );
    expect(kills).toBeGreaterThan(10);
    expect(n).toBe(treeNames(SHAPE).length - 1);
    expect(unconsumed).toBe(0);
    expect(slowest).toBeLessThan(8);
  });
});
