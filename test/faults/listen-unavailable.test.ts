// LISTEN unavailable (SPEC §5, §8): WARREN_LISTEN_URL=off (as behind PgBouncer in transaction
// mode), or a listener whose connection is refused. A `warren -p` fan-in still delivers: it starts
// at once, says so in one line, and its waits and scheduler re-check every second instead of
// sleeping until a NOTIFY that never comes (the parent's fan-in returns soon after the last mail,
// not at the 15 s safety re-check). Same answer, every mail exactly once, every agent idle.
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.js";
import { useE2E } from "../runtime/e2e-support.js";
import { expectExactlyOnce, scriptSleepyFanIn } from "./sleepy-fan-in.js";

const e2e = useE2E();
let proxy: TcpProxy | undefined;

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

async function fanInWithout(listenUrl: string) {
  scriptSleepyFanIn(e2e.fake(), { sleepSeconds: 1, waitSeconds: 60 });

  const started = Date.now();
  const result = await e2e.prompt("fan out", {
    timeout: 60,
    env: { WARREN_LISTEN_URL: listenUrl },
  });
  const wallMs = Date.now() - started;
  const db = e2e.db();

  expect(result.code, result.stderr).toBe(0);
  expect(result.json?.text).toBe("all reported");
  // One line, from however many threads' buses, and nothing else.
  const lines = result.stderr.split("\n").filter((l) => l.trim());
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(
    /^warren: notifications unavailable \(.+\); waits and claims re-check every 1 s$/,
  );

  const treeId = result.json!.tree_id;
  await expectExactlyOnce(db, treeId);

  // How long the root's fan-in took to notice the last mail: a re-check away, not a NOTIFY.
  const gap = await db.execute<{ ms: number }>(sql`
    select extract(epoch from (w.created_at - (select max(created_at) from mail
                                                where tree_id = ${treeId}))) * 1000 as ms
      from events w
     where w.agent_id = ${treeId} and w.kind = 'tool_result' and w.data->>'name' = 'wait'`);
  const gapMs = Number(gap.rows[0]!.ms);
  process.stderr.write(
    `LISTEN unavailable (${listenUrl === "off" ? "off" : "refused"}): -p took ` +
      `${(wallMs / 1000).toFixed(1)} s; the fan-in returned ${gapMs.toFixed(0)} ms after the last mail\n`,
  );
  expect(gapMs).toBeLessThan(5_000);
  expect(wallMs).toBeLessThan(30_000);
}

describe("LISTEN unavailable", () => {
  it("WARREN_LISTEN_URL=off: a -p fan-in delivers by re-checking", () => fanInWithout("off"));

  it("a listener whose connections are refused: a -p fan-in starts and delivers", async () => {
    const target = new URL(e2e.db().$client.options.connectionString!);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    proxy.setNewConnections("refuse");
    await fanInWithout(proxy.urlFor(e2e.db().$client.options.connectionString!));
    // Each bus's listener (the main thread's and the worker thread's) kept trying in the
    // background while the run went on.
    expect(proxy.accepted()).toBeGreaterThan(4);
  });
});
