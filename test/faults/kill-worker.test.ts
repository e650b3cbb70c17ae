// `kill -9` of a `warren worker` between claim and finish (SPEC §6): another worker takes the
// leases over once they expire and finishes the tree — every mail sent and consumed exactly
// once, every agent idle, no effect twice.
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { sleep } from "../support/agents.js";
import { startWarren, warrenEnv } from "../support/warren.js";
import { after, forkedIds, isFirst, mailOf, treeAgents, useE2E } from "../runtime/e2e-support.js";
import type { ChildProcess } from "node:child_process";

const e2e = useE2E();
const workers: ChildProcess[] = [];
afterEach(() => {
  for (const w of workers.splice(0)) if (w.exitCode === null) w.kill("SIGKILL");
});

async function until(check: () => Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const names = ["k1", "k2", "k3"];

function script(bash: string): void {
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
      reply: (req) => ({
        toolCalls: [
          {
            name: "wait",
            arguments: { timeout: 120, from_agents: names.map((n) => forkedIds(req)[n]) },
          },
        ],
      }),
    },
    { agent: "root", match: after("wait"), reply: { text: "done" } },
    ...names.flatMap((name) => [
      {
        agent: name,
        match: isFirst,
        reply: { toolCalls: [{ name: "bash", arguments: { command: bash } }] },
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
}

async function startTree() {
  const db = e2e.db();
  const root = await createTree(db, { prompt: "go", cwd: process.cwd() });
  const env = warrenEnv({
    databaseUrl: db.$client.options.connectionString!,
    modelUrl: e2e.fake().baseURL,
    extra: { WARREN_LEASE_SECONDS: "2" },
  });
  return { db, root, env };
}

async function childrenInBash(db: ReturnType<typeof e2e.db>): Promise<void> {
  await until(async () => {
    const rows = await db.execute<{ n: number }>(sql`
        select count(*)::int as n from events where kind = 'tool_call' and data->>'name' = 'bash'`);
    return rows.rows[0]!.n === 3;
  }, "three children in bash");
}

async function finished(db: ReturnType<typeof e2e.db>, rootId: string): Promise<void> {
  await until(async () => {
    const rows = await db.execute<{ busy: number; root: string }>(sql`
        select count(*) filter (where state in ('running', 'waiting'))::int as busy,
               (select state from agents where id = ${rootId}) as root
          from agents where tree_id = ${rootId}`);
    return rows.rows[0]!.busy === 0 && rows.rows[0]!.root === "idle";
  }, "the tree to finish");
}

/** Every mail once and consumed once, every agent idle, one result per tool call, root done. */
async function expectExactlyOnce(db: ReturnType<typeof e2e.db>, rootId: string): Promise<void> {
  const tree = await treeAgents(db, rootId);
  // Forks of one response run concurrently: their children's creation order is not fixed.
  const rank = (name: string) => (name === "root" ? "" : name);
  const byName = [...tree].sort((a, b) => rank(a.name).localeCompare(rank(b.name)));
  expect(byName.map((a) => [a.name, a.state])).toEqual([
    ["root", "idle"],
    ["k1", "idle"],
    ["k2", "idle"],
    ["k3", "idle"],
  ]);
  const mail = await mailOf(db, rootId);
  expect(mail.map((m) => m.body).sort()).toEqual(["result k1", "result k2", "result k3"]);
  expect(mail.every((m) => m.consumed_by_event !== null)).toBe(true);
  const doubled = await db.execute<{ call: string }>(sql`
      select e.data->>'tool_call_id' as call from events e join agents a on a.id = e.agent_id
       where a.tree_id = ${rootId} and e.kind = 'tool_result'
       group by e.agent_id, e.data->>'tool_call_id' having count(*) > 1`);
  expect(doubled.rows).toEqual([]);
  const final = await db.execute<{ content: string }>(sql`
      select content from events where agent_id = ${rootId} and kind = 'assistant'
       order by id desc limit 1`);
  expect(final.rows[0]!.content).toBe("done");
}

describe("a worker killed with kill -9 mid-run", () => {
  it("is replaced by another worker: everything exactly once", async () => {
    script("sleep 30");
    const { db, root, env } = await startTree();
    const first = startWarren(["worker"], env);
    workers.push(first.child);
    await childrenInBash(db);
    first.child.kill("SIGKILL");
    await first.done;
    const second = startWarren(["worker"], env);
    workers.push(second.child);
    await finished(db, root.id);
    second.child.kill("SIGTERM");
    const stopped = await second.done;
    expect(stopped.stderr).not.toMatch(/Failed query/);
    await expectExactlyOnce(db, root.id);
  });
});

describe("a worker paused (SIGSTOP) past its lease, then resumed", () => {
  it("writes nothing once another worker took over", async () => {
    script("sleep 2; echo finished");
    const { db, root, env } = await startTree();
    const paused = startWarren(["worker"], env);
    workers.push(paused.child);
    await childrenInBash(db);
    paused.child.kill("SIGSTOP");
    const other = startWarren(["worker"], env);
    workers.push(other.child);
    await finished(db, root.id);
    // The paused worker wakes with its bash calls done and its leases gone.
    paused.child.kill("SIGCONT");
    await sleep(1_500);
    paused.child.kill("SIGTERM");
    other.child.kill("SIGTERM");
    await Promise.all([paused.done, other.done]);
    await expectExactlyOnce(db, root.id);
  });
});
