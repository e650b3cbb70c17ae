// A database outage under traffic (SPEC §5): every connection of a `warren -p` fan-in is cut and
// refused for ~2 s (a TCP proxy in front of Postgres) while its children run `bash sleep`. The run
// carries on: same answer, every mail exactly once, every agent idle, one reconnecting line and
// never SQL text. The same with every open connection turned half-open (silent, never closed).
import { sql } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.js";
import { after, forkedIds, isFirst, mailOf, treeAgents, useE2E } from "../runtime/e2e-support.js";
import { sleep } from "../support/agents.js";

const e2e = useE2E();
let proxy: TcpProxy;

beforeEach(async () => {
  const target = new URL(e2e.db().$client.options.connectionString!);
  proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
});
afterEach(async () => {
  await proxy.close();
});

async function until(check: () => Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function fanInThrough(fault: () => Promise<void>, env: Record<string, string> = {}) {
  {
    const names = ["c1", "c2", "c3"];
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: names.map((name) => ({
            name: "fork",
            arguments: { name, prompt: `part ${name}`, context: "fresh" },
          })),
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: (req) => {
          const ids = forkedIds(req);
          return {
            toolCalls: [
              { name: "wait", arguments: { timeout: 60, from_agents: names.map((n) => ids[n]) } },
            ],
          };
        },
      },
      { agent: "root", match: after("wait"), reply: { text: "all reported" } },
      ...names.flatMap((name) => [
        {
          agent: name,
          match: isFirst,
          reply: { toolCalls: [{ name: "bash", arguments: { command: "sleep 3; echo slept" } }] },
        },
        {
          agent: name,
          match: after("bash"),
          reply: {
            toolCalls: [{ name: "send", arguments: { to: "parent", message: `result ${name}` } }],
          },
        },
        { agent: name, match: after("send"), reply: { text: `${name} done` } },
      ]),
    ]);

    const url = e2e.db().$client.options.connectionString!;
    const run = e2e.prompt("fan out", {
      timeout: 120,
      env: { DATABASE_URL: proxy.urlFor(url), WARREN_LEASE_SECONDS: "6", ...env },
    });
    const db = e2e.db();
    // Cut once all three children are inside `bash sleep`.
    await until(async () => {
      const rows = await db.execute<{ n: number }>(sql`
        select count(*)::int as n from events
         where kind = 'tool_call' and data->>'name' = 'bash'`);
      return rows.rows[0]!.n === 3;
    }, "three children in bash");
    await fault();
    const result = await run;

    expect(result.stderr).not.toMatch(/Failed query|select |insert |update /i);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json?.text).toBe("all reported");
    // One line while reconnecting, nothing else.
    const lines = result.stderr.split("\n").filter((l) => l.trim());
    expect(lines.length, result.stderr).toBeLessThanOrEqual(1);
    lines.forEach((line) =>
      expect(line).toMatch(/^warren: database unreachable \(.+\); retrying$/),
    );

    const tree = await treeAgents(db, result.json!.tree_id);
    expect(tree.map((a) => a.state)).toEqual(["idle", "idle", "idle", "idle"]);
    const mail = await mailOf(db, result.json!.tree_id);
    expect(mail.map((m) => m.body).sort()).toEqual(["result c1", "result c2", "result c3"]);
    expect(mail.every((m) => m.consumed_at !== null && m.consumed_by_event !== null)).toBe(true);
    // Every model response recorded once: one assistant event per request the fake answered.
    const assistants = await db.execute<{ n: number }>(sql`
      select count(*)::int as n from events e join agents a on a.id = e.agent_id
       where a.tree_id = ${result.json!.tree_id} and e.kind = 'assistant'`);
    expect(assistants.rows[0]!.n).toBe(3 + 3 * 3);
  }
}

describe("database outage", () => {
  it("a -p fan-in survives every connection being cut and refused for 2 s", () =>
    fanInThrough(() => proxy.outage(2_000)));

  it("a -p fan-in survives every open connection going half-open", () =>
    // A statement on a silent connection times out; its client is dropped and the work retried
    // on a fresh connection.
    fanInThrough(async () => proxy.halfOpenAll(), { WARREN_DB_QUERY_TIMEOUT_MS: "1500" }));
});
