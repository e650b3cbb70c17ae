// The fault tests' common run: a root forks three children that each sit in `bash sleep`, then
// send to it; the root collects them with a fan-in `wait`. Faults are injected while the children
// sleep; afterwards everything must have happened exactly once.
import { sql } from "drizzle-orm";
import { expect } from "vitest";
import type { Db } from "../../src/db/client.js";
import type { FakeModel } from "../support/fake-model.js";
import { sleep } from "../support/agents.js";
import { after, forkedIds, isFirst, mailOf, treeAgents } from "../runtime/e2e-support.js";

const NAMES = ["c1", "c2", "c3"];
/** Model requests of one run: the root's three, and three per child. */
export const FAN_IN_REQUESTS = 3 + NAMES.length * 3;

export function scriptSleepyFanIn(
  fake: FakeModel,
  options: { sleepSeconds: number; waitSeconds: number },
): void {
  fake.script([
    {
      agent: "root",
      match: isFirst,
      reply: {
        toolCalls: NAMES.map((name) => ({
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
        const from_agents = NAMES.map((n) => ids[n]);
        return {
          toolCalls: [{ name: "wait", arguments: { timeout: options.waitSeconds, from_agents } }],
        };
      },
    },
    { agent: "root", match: after("wait"), reply: { text: "all reported" } },
    ...NAMES.flatMap((name) => [
      {
        agent: name,
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "bash", arguments: { command: `sleep ${options.sleepSeconds}; echo slept` } },
          ],
        },
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

export async function until(
  check: () => Promise<boolean>,
  what: string,
  ms = 30_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Resolves once all three children are inside `bash sleep` (the moment to inject a fault). */
export function childrenAsleep(db: Db): Promise<void> {
  return until(async () => {
    const rows = await db.execute<{ n: number }>(sql`
      select count(*)::int as n from events
       where kind = 'tool_call' and data->>'name' = 'bash'`);
    return rows.rows[0]!.n === NAMES.length;
  }, "three children in bash");
}

/** Every agent idle and unleased, every mail consumed once, every model response recorded once. */
export async function expectExactlyOnce(db: Db, treeId: string): Promise<void> {
  const tree = await treeAgents(db, treeId);
  expect(tree.map((a) => a.state)).toEqual(["idle", "idle", "idle", "idle"]);
  expect(tree.every((a) => a.lease_owner === null)).toBe(true);
  const mail = await mailOf(db, treeId);
  expect(mail.map((m) => m.body).sort()).toEqual(NAMES.map((n) => `result ${n}`));
  expect(mail.every((m) => m.consumed_at !== null && m.consumed_by_event !== null)).toBe(true);
  const assistants = await db.execute<{ n: number }>(sql`
    select count(*)::int as n from events e join agents a on a.id = e.agent_id
     where a.tree_id = ${treeId} and e.kind = 'assistant'`);
  expect(assistants.rows[0]!.n).toBe(FAN_IN_REQUESTS);
  const doubled = await db.execute<{ call: string }>(sql`
    select e.data->>'tool_call_id' as call from events e join agents a on a.id = e.agent_id
     where a.tree_id = ${treeId} and e.kind = 'tool_result'
     group by e.agent_id, e.data->>'tool_call_id' having count(*) > 1`);
  expect(doubled.rows).toEqual([]);
}
