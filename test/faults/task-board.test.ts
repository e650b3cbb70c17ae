// The task board under faults (issue 30): three worker agents work one board from two `warren
// worker` processes, one of them reaching Postgres through a proxy that loses the reply of every
// second committed claim or completion (6 at most), and that process is killed with `kill -9` while tasks are held and
// started again. Every task ends done exactly once: claimed by one call, finished by one call,
// each result recorded once — a claim whose reply was lost finds its task again, a claim in flight
// when its worker died runs again, and a task never goes to two claimers.
import type { ChildProcess } from "node:child_process";
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { addTask } from "../../src/tasks/board.js";
import { sleep } from "../support/agents.js";
import type { RecordedRequest } from "../support/fake-model.js";
import { usePgProxy } from "../support/use-pg-proxy.js";
import { startWarren, warrenEnv } from "../support/warren.js";
import { lastToolName, lastToolResults, useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();
const proxy = usePgProxy(() => e2e.db().$client.options.connectionString!);
const workers: ChildProcess[] = [];
afterEach(() => {
  for (const w of workers.splice(0)) if (w.exitCode === null) w.kill("SIGKILL");
});

async function until(check: () => Promise<boolean>, what: string, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const NAMES = ["w1", "w2", "w3"];

/** The task the agent claimed last: the newest task_claim result in its conversation. */
function heldTask(req: RecordedRequest): string | undefined {
  const calls = new Map<string, string>();
  for (const m of req.messages) {
    for (const c of m.tool_calls ?? []) calls.set(c.id, c.function.name);
  }
  const claims = req.messages.filter(
    (m) => m.role === "tool" && calls.get(m.tool_call_id ?? "") === "task_claim",
  );
  const last = claims.at(-1);
  const value = last ? (JSON.parse(last.content ?? "{}") as { task_id?: string }) : {};
  return value.task_id;
}

/** A worker's loop: claim, work (bash, which a kill may interrupt), finish, claim again. */
function workerReply(req: RecordedRequest) {
  const call = (name: string, args: object) => ({ toolCalls: [{ name, arguments: args }] });
  const last = lastToolName(req);
  if (last === "task_claim") {
    const result = lastToolResults(req).at(-1)?.value as { task_id?: string; status?: string };
    if (result?.task_id) return call("bash", { command: "sleep 0.7" });
    if (result?.status === "empty") return { text: "board empty" };
    return call("task_claim", { timeout: 30 });
  }
  if (last === "bash") {
    const task = heldTask(req)!;
    return call("task_done", { task_id: task, result: `result of ${task}` });
  }
  return call("task_claim", { timeout: 30 });
}

describe("the task board under kill -9 and lost replies", () => {
  it("three workers on two processes: every task done exactly once", async () => {
    e2e
      .fake()
      .script(
        NAMES.map((name) => ({ agent: name, times: Infinity, reply: workerReply, label: name })),
      );
    const db = e2e.db();
    const root = await createTree(db, { name: "root", cwd: process.cwd() });
    // A board with dependencies: 3 independent tasks, then 3 behind them.
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(await addTask(db, { treeId: root.id, createdBy: null, title: `part ${i}` }));
    }
    ids.push(
      await addTask(db, {
        treeId: root.id,
        createdBy: null,
        title: "join 0+1",
        dependsOn: [ids[0]!, ids[1]!],
      }),
    );
    ids.push(
      await addTask(db, {
        treeId: root.id,
        createdBy: null,
        title: "after 2",
        dependsOn: [ids[2]!],
      }),
    );
    ids.push(
      await addTask(db, {
        treeId: root.id,
        createdBy: null,
        title: "last",
        dependsOn: [ids[3]!, ids[4]!],
      }),
    );

    const url = db.$client.options.connectionString!;
    const env = (databaseUrl: string) =>
      warrenEnv({
        databaseUrl,
        modelUrl: e2e.fake().baseURL,
        extra: { WARREN_LEASE_SECONDS: "2", WARREN_WORKER_THREADS: "1" },
      });
    // Claims and completions: the transactions that move a task (and record the call's result).
    proxy().dropCommits({ statement: /update tasks set state/i, every: 2, max: 6 });
    // The lossy process starts alone, so that it runs agents (and loses replies) for certain.
    const lossy = startWarren(["worker"], env(proxy().urlFor(url)));
    workers.push(lossy.child);
    for (const name of NAMES) {
      await forkAgent(db, root.id, { name, prompt: "work the task board", context: "fresh" });
    }
    await until(async () => {
      const rows = await db.execute<{ n: number }>(
        sql`select count(*)::int as n from tasks where tree_id = ${root.id} and state <> 'pending'`,
      );
      return rows.rows[0]!.n >= 2 && proxy().dropped().length > 0;
    }, "tasks claimed and a reply lost");
    const direct = startWarren(["worker"], env(url));
    workers.push(direct.child);
    // Kill the lossy process while tasks are held, then start it again.
    await sleep(500);
    lossy.child.kill("SIGKILL");
    await lossy.done;
    const again = startWarren(["worker"], env(proxy().urlFor(url)));
    workers.push(again.child);

    await until(async () => {
      const rows = await db.execute<{ open: number; busy: number }>(sql`
        select (select count(*)::int from tasks where tree_id = ${root.id} and state <> 'done') as open,
               (select count(*)::int from agents where tree_id = ${root.id}
                  and state in ('running', 'waiting')) as busy`);
      return rows.rows[0]!.open === 0 && rows.rows[0]!.busy === 0;
    }, "every task done and every worker idle");
    again.child.kill("SIGTERM");
    direct.child.kill("SIGTERM");
    await Promise.all([again.done, direct.done]);

    const context = `dropped ${proxy().dropped().length} replies of ${proxy().commits()} commits`;
    const tasks = await db.execute<{ id: string; state: string; result: string }>(
      sql`select id::text, state, result from tasks where tree_id = ${root.id}`,
    );
    expect(
      tasks.rows.map((t) => t.state),
      context,
    ).toEqual(ids.map(() => "done"));
    for (const t of tasks.rows) expect(t.result).toBe(`result of ${t.id}`);
    // One claim and one completion recorded per task, across every worker agent.
    const recorded = await db.execute<{ tool: string; task: string; n: number }>(sql`
      select e.data->>'name' as tool, (e.content::jsonb)->>'task_id' as task, count(*)::int as n
        from events e join agents a on a.id = e.agent_id
       where a.tree_id = ${root.id} and e.kind = 'tool_result'
         and e.data->>'name' in ('task_claim', 'task_done')
         and (e.content::jsonb) ? 'task_id'
       group by 1, 2`);
    const count = (tool: string) =>
      Object.fromEntries(recorded.rows.filter((r) => r.tool === tool).map((r) => [r.task, r.n]));
    const once = Object.fromEntries(ids.map((id) => [id, 1]));
    expect(count("task_claim"), context).toEqual(once);
    expect(count("task_done"), context).toEqual(once);
    const doubled = await db.execute<{ call: string }>(sql`
      select e.data->>'tool_call_id' as call from events e join agents a on a.id = e.agent_id
       where a.tree_id = ${root.id} and e.kind = 'tool_result'
       group by e.agent_id, e.data->>'tool_call_id' having count(*) > 1`);
    expect(doubled.rows).toEqual([]);
    expect(proxy().dropped().length, context).toBeGreaterThan(0);
  });
});
