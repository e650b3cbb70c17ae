// The activity line a person sees while an agent works ("thinking", then its calls, then thinking
// again, then nothing), as every change of the row's `activity` in order. Two of those lines ride
// in statements that run anyway: "thinking" at a turn's start in the update that counts the turn
// (also when a resumed turn was counted already), a response's calls in the statement that
// records it (so the line and the calls' scrollback lines commit together).
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvent } from "../../src/agents/events.js";
import { createTree } from "../../src/agents/tree.js";
import { claimNext } from "../../src/runtime/leases.js";
import { runAgent } from "../../src/runtime/turn.js";
import { useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { fakeTurnDeps } from "../support/turn-deps.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
let fake: FakeModel;

beforeAll(async () => {
  fake = await startFakeModel();
  // Every change of an agent's activity, with the transaction that made it.
  await database().db.execute(sql`
    create table activity_log (n serial primary key, agent_id uuid, activity text, xid xid8);
    create function log_activity() returns trigger language plpgsql as $$
    begin
      insert into activity_log (agent_id, activity, xid)
        values (new.id, new.activity, pg_current_xact_id());
      return null;
    end $$;
    create trigger log_activity after update on agents for each row
      when (old.activity is distinct from new.activity) execute function log_activity();`);
});
afterAll(async () => {
  await fake.close();
});

/** A running root with `input` to answer, claimed by a worker; runs its turn to the end. */
async function runTurn(name: string, input: string, before?: (id: string) => Promise<void>) {
  const { db } = database();
  const root = await createTree(db, { name });
  await appendEvent(db, root.id, "user", input);
  await db.execute(sql`update agents set state = 'running' where id = ${root.id}`);
  await before?.(root.id);
  const claimed = await claimNext(db, "w1", 30, root.tree_id);
  await runAgent(
    fakeTurnDeps(db, bus(), fake.baseURL, { owner: "w1", epoch: claimed!.lease_epoch }),
    root.id,
    new AbortController().signal,
  );
  fake.assertAllUsed();
  const log = await db.execute<{ activity: string | null; xid: string }>(
    sql`select activity, xid::text from activity_log where agent_id = ${root.id} order by n`,
  );
  const turns = await db.execute<{ turns: number }>(
    sql`select turns from agents where id = ${root.id}`,
  );
  return { id: root.id, log: log.rows, turns: turns.rows[0]!.turns };
}

describe("the activity line", () => {
  it("shows thinking, the calls, thinking again, then nothing; the calls' line commits with them", async () => {
    fake.script([
      {
        agent: "looker",
        reply: {
          toolCalls: [
            { name: "glob", arguments: { pattern: "*.nothing-here" } },
            { name: "wait", arguments: { timeout: 0 } },
          ],
        },
      },
      { agent: "looker", reply: { text: "nothing found" } },
    ]);
    const { id, log, turns } = await runTurn("looker", "look around");
    expect(log.map((l) => l.activity)).toEqual([
      "thinking",
      "glob: *.nothing-here",
      "wait: checking mail",
      "thinking",
      null,
    ]);
    expect(turns).toBe(1);
    // The first line is the count's (the turn's first write), the calls' line the answer's.
    const { db } = database();
    const answer = await db.execute<{ xid: string }>(sql`
      select xmin::text as xid from events
       where agent_id = ${id} and kind = 'assistant' order by id limit 1`);
    const calls = await db.execute<{ xid: string }>(sql`
      select distinct xmin::text as xid from events where agent_id = ${id} and kind = 'tool_call'`);
    expect(Number(log[1]!.xid) % 2 ** 32).toBe(Number(answer.rows[0]!.xid));
    expect(calls.rows.map((r) => r.xid)).toEqual([answer.rows[0]!.xid]);
  });

  it("shows thinking for a turn resumed after it was counted, counting it once", async () => {
    fake.script({ agent: "resumer", reply: { text: "back" } });
    const { log, turns } = await runTurn("resumer", "carry on", async (id) => {
      // A worker counted the turn and showed a call, then died.
      const { db } = database();
      await db.execute(sql`
        update agents set turns = 1, activity = 'bash: make',
                          turn_counted_event = (select max(id) from events where agent_id = ${id})
         where id = ${id}`);
    });
    expect(log.map((l) => l.activity)).toEqual(["bash: make", "thinking", null]);
    expect(turns).toBe(1);
  });
});
