// What a turn blocked in a tool call keeps alive (issue 14: memory per waiting agent). A root
// with a large conversation calls `wait`; while it waits, its heap must not hold that
// conversation: the request that sent it is answered, and the turn loop's frames (an async
// function keeps every local it declared while it awaits) no longer reach the rows it was built
// from. Failed before the fix: each waiting agent kept its whole conversation (the pass read).
import { sql } from "drizzle-orm";
import { getHeapStatistics } from "node:v8";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvent } from "../../src/agents/events.js";
import { createTree } from "../../src/agents/tree.js";
import { sendMail } from "../../src/mail/send.js";
import { fullCollection } from "../../src/runtime/heap-trim.js";
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
});
afterAll(async () => {
  await fake.close();
});

const AGENTS = 4;
/** Characters of each agent's first message: one-byte text, so about this many bytes of heap. */
const BULK = 4 * 1024 * 1024;
/** The test database's pool (createDb's default size), and some. */
const POOL = 8;

describe("a waiting agent's turn", () => {
  it("keeps none of its conversation while it blocks in wait", async () => {
    const { db } = database();
    const collect = fullCollection();
    expect(collect).toBeDefined();
    const heapUsed = () => {
      collect!();
      collect!();
      return getHeapStatistics().used_heap_size;
    };
    fake.script({
      reply: (req) =>
        req.lastMessage?.role === "tool"
          ? { text: "done" }
          : { toolCalls: [{ name: "wait", arguments: { timeout: 120 } }] },
      times: 2 * AGENTS,
    });
    const roots: { id: string; tree: string; epoch: number }[] = [];
    for (let i = 0; i < AGENTS; i++) {
      const root = await createTree(db, { name: `holder-${i}` });
      // Each its own text (nothing shared between agents), built and dropped here.
      await appendEvent(db, root.id, "user", `${i} ${"bulk ".repeat(BULK / 5)}`);
      await db.execute(sql`update agents set state = 'running' where id = ${root.id}`);
      const claimed = await claimNext(db, `w${i}`, 60, root.tree_id);
      roots.push({ id: root.id, tree: root.tree_id, epoch: claimed!.lease_epoch });
    }
    // Every connection of the pool opened first: a pg connection keeps the result of the query
    // that opened it for as long as it lives (its listeners close over that query's callback),
    // whichever query that was. At most one result per connection: not per waiting agent.
    await Promise.all(Array.from({ length: POOL }, () => db.execute(sql`select pg_sleep(0.1)`)));
    const before = heapUsed();
    const stop = new AbortController(); // a failed expectation stops the turns
    const runs = roots.map((r, i) => {
      const deps = fakeTurnDeps(db, bus(), fake.baseURL, { owner: `w${i}`, epoch: r.epoch });
      deps.config.model.contextWindows = { "*": 100 * BULK }; // no compaction of the bulk
      return runAgent(deps, r.id, stop.signal);
    });
    try {
      for (let tries = 0; ; tries++) {
        const rows = await db.execute<{ n: number }>(sql`
        select count(*)::int as n from agents
         where state = 'waiting'`);
        if (rows.rows[0]!.n === AGENTS) break;
        expect(tries).toBeLessThan(300);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // The fake model (in this process) keeps what was sent: not the runtime's.
      fake.forget();
      const waiting = heapUsed() - before;
      expect(waiting).toBeLessThan((AGENTS * BULK) / 4);

      for (const r of roots)
        await sendMail(db, { treeId: r.tree, fromId: null, toId: r.id, body: "go on" });
      const ends = await Promise.all(runs);
      // Why a turn did not end idle, if one did not (the error events say).
      const errors = await db.execute<{ content: string }>(
        sql`select content from events where kind = 'error'`,
      );
      expect({ ends, errors: errors.rows.map((r) => r.content) }).toEqual({
        ends: roots.map(() => "idle"),
        errors: [],
      });
    } finally {
      stop.abort();
      await Promise.allSettled(runs);
    }
    expect(fake.unmatched).toEqual([]);
    fake.assertAllUsed();
  }, 60_000);
});
