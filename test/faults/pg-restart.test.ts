// Postgres stopped and started under traffic (SPEC §5), for real: the test's own embedded
// Postgres (its data in a temporary directory) is stopped with a fast shutdown while the three
// children of a `warren -p` fan-in run `bash sleep`, stays down a moment, and is started again on
// the same port and data. The run carries on: same answer, every mail exactly once, every agent
// idle, one "database unreachable …; retrying" line and never SQL text.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, createDb, type Db } from "../../src/db/client.js";
import { embeddedStatus, ensureEmbedded, stopEmbedded } from "../../src/db/embedded.js";
import { migrate } from "../../src/db/migrate.js";
import { sleep } from "../support/agents.js";
import { after, forkedIds, isFirst, mailOf, treeAgents, useE2E } from "../runtime/e2e-support.js";

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

async function until(check: () => Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe("Postgres stopped and started under traffic", () => {
  it("a -p fan-in carries on: same answer, everything exactly once", async () => {
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
              { name: "wait", arguments: { timeout: 90, from_agents: names.map((n) => ids[n]) } },
            ],
          };
        },
      },
      { agent: "root", match: after("wait"), reply: { text: "all reported" } },
      ...names.flatMap((name) => [
        {
          agent: name,
          match: isFirst,
          reply: { toolCalls: [{ name: "bash", arguments: { command: "sleep 2; echo slept" } }] },
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

    const run = e2e.prompt("fan out", {
      timeout: 120,
      env: { DATABASE_URL: url, WARREN_LEASE_SECONDS: "10" },
    });
    await until(async () => {
      const rows = await db.execute<{ n: number }>(sql`
        select count(*)::int as n from events
         where kind = 'tool_call' and data->>'name' = 'bash'`);
      return rows.rows[0]!.n === 3;
    }, "three children in bash");

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
    // The outage was seen, in one line, and nothing else was said.
    const lines = result.stderr.split("\n").filter((l) => l.trim());
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^warren: database unreachable \(.+\); retrying$/);

    const treeId = result.json!.tree_id;
    const tree = await treeAgents(db, treeId);
    expect(tree.map((a) => a.state)).toEqual(["idle", "idle", "idle", "idle"]);
    expect(tree.every((a) => a.lease_owner === null)).toBe(true);
    const mail = await mailOf(db, treeId);
    expect(mail.map((m) => m.body).sort()).toEqual(["result c1", "result c2", "result c3"]);
    expect(mail.every((m) => m.consumed_at !== null && m.consumed_by_event !== null)).toBe(true);
    // Every model response recorded once, every tool call answered once.
    const assistants = await db.execute<{ n: number }>(sql`
      select count(*)::int as n from events e join agents a on a.id = e.agent_id
       where a.tree_id = ${treeId} and e.kind = 'assistant'`);
    expect(assistants.rows[0]!.n).toBe(3 + 3 * 3);
    expect(e2e.fake().requests).toHaveLength(3 + 3 * 3);
    const doubled = await db.execute<{ call: string }>(sql`
      select e.data->>'tool_call_id' as call from events e join agents a on a.id = e.agent_id
       where a.tree_id = ${treeId} and e.kind = 'tool_result'
       group by e.agent_id, e.data->>'tool_call_id' having count(*) > 1`);
    expect(doubled.rows).toEqual([]);
  });
});
