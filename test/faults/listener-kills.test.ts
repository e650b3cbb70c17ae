// The listener killed repeatedly under traffic (SPEC §5, §8): one `warren worker` runs a root that
// forks 16 children, each blocked in a plain `wait` (its only wake-up is the NOTIFY of its mail),
// then mails each of them; meanwhile every LISTEN backend of the database is terminated every
// 50 ms. NOTIFYs sent while a listener is down are lost (about one in eight here); the bus then
// reconnects and tells every waiter to look again, and while it cannot listen waits re-check every
// second — so no mail waits for the 15 s safety re-check. Everything exactly once.
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { sleep } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel, type Rule } from "../support/fake-model.js";
import { startWarren, warrenEnv } from "../support/warren.js";
import { after, isFirst } from "../runtime/e2e-support.js";
import { until } from "./sleepy-fan-in.js";

const database = useTestDatabase();
const CHILDREN = Array.from({ length: 16 }, (_, i) => `w${i}`); // the default maxChildren
const KILL_EVERY_MS = 50;

let fake: FakeModel | undefined;
let worker: ReturnType<typeof startWarren> | undefined;
afterEach(async () => {
  if (worker && worker.child.exitCode === null) worker.child.kill("SIGKILL");
  await fake?.close();
});

function script(): Rule[] {
  return [
    {
      agent: "root",
      match: isFirst,
      reply: {
        toolCalls: CHILDREN.map((name) => ({
          name: "fork",
          arguments: { name, prompt: "wait for my mail", context: "fresh" },
        })),
      },
    },
    {
      agent: "root",
      match: after("fork"),
      // Long enough for every child to be blocked in its wait before the mail goes out.
      reply: {
        delayMs: 2_000,
        toolCalls: CHILDREN.map((name) => ({
          name: "send",
          arguments: { to: name, message: `mail for ${name}` },
        })),
      },
    },
    { agent: "root", match: after("send"), reply: { text: "all sent" } },
    // Each child's final text is its result, mailed to the root, which reads it.
    { agent: "root", reply: { text: "noted" }, times: Infinity },
    ...CHILDREN.flatMap((name) => [
      {
        agent: name,
        match: isFirst,
        reply: { toolCalls: [{ name: "wait", arguments: { timeout: 60 } }] },
      },
      { agent: name, match: after("wait"), reply: { text: `${name} got it` } },
    ]),
  ];
}

describe("the listener killed repeatedly under traffic", () => {
  it("loses no mail and leaves no wait sleeping until the safety re-check", async () => {
    const { db, url } = database();
    fake = await startFakeModel();
    fake.script(script());
    const env = warrenEnv({
      databaseUrl: url,
      modelUrl: fake.baseURL,
      extra: { WARREN_CONCURRENCY: "32", WARREN_LEASE_SECONDS: "10" },
    });
    worker = startWarren(["worker"], env);
    const root = await createTree(db, { prompt: "mail your children" });

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
            select count(*) = ${CHILDREN.length + 1} and bool_and(state = 'idle') as done
              from agents where tree_id = ${root.id}`);
          return rows.rows[0]!.done === true;
        },
        "every agent to finish",
        40_000,
      );
    } finally {
      running = false;
      await killer;
    }
    worker.child.kill("SIGTERM");
    const stopped = await worker.done;
    expect(stopped.stderr).not.toMatch(/Failed query|select |insert |update /i);

    // Each child took its one mail once, and soon after it was sent, though NOTIFYs were lost.
    const waits = await db.execute<{ name: string; mails: number; gap: number }>(sql`
      select a.name, jsonb_array_length(w.data->'mail_ids')::int as mails,
             extract(epoch from w.created_at - m.created_at)::float as gap
        from events w join agents a on a.id = w.agent_id
        join mail m on m.id = (w.data->'mail_ids'->>0)::bigint
       where a.tree_id = ${root.id} and w.kind = 'tool_result' and w.data->>'name' = 'wait'
       order by a.name`);
    const slowest = Math.max(...waits.rows.map((w) => w.gap));
    process.stderr.write(
      `listener kills: ${kills} LISTEN backends terminated; ${waits.rows.length} waits, the ` +
        `slowest returned ${slowest.toFixed(2)} s after its mail\n`,
    );
    expect(kills).toBeGreaterThan(20);
    expect(waits.rows.map((w) => w.name)).toEqual([...CHILDREN].sort());
    expect(waits.rows.every((w) => w.mails === 1)).toBe(true);
    expect(slowest).toBeLessThan(5);
    // The root's mail to its children, each taken once (the children's results to the root are
    // mailed after their waits, read by the root's later turns).
    const mail = await db.execute<{ n: number; unconsumed: number; results: number }>(sql`
      select count(*) filter (where not final)::int as n,
             count(*) filter (where consumed_at is null and not final)::int as unconsumed,
             count(*) filter (where final)::int as results
        from mail where tree_id = ${root.id}`);
    expect(mail.rows[0]).toEqual({ n: CHILDREN.length, unconsumed: 0, results: CHILDREN.length });
    expect(fake.requests.length).toBeGreaterThanOrEqual(3 + CHILDREN.length * 2);
  });
});
