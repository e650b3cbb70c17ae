// Many waiters on one mailbox: every message is received exactly once and none is lost.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { createBus, type Bus } from "../../src/bus/bus.js";
import { closeDb, createDb, type Db } from "../../src/db/client.js";
import { sendMail } from "../../src/mail/send.js";
import { waitForMail } from "../../src/mail/wait.js";
import { useTestDatabase } from "../support/db.js";

const WAITERS = 20;
const MESSAGES = 1_000;
const SENDERS = 5;

const database = useTestDatabase();
let pool: Db;
let bus: Bus;

beforeAll(async () => {
  // Every waiter and sender may hold a connection at once.
  pool = createDb(database().url, { max: WAITERS + SENDERS + 2 });
  bus = await createBus(database().url);
});

afterAll(async () => {
  await bus?.close();
  if (pool) await closeDb(pool);
});

it(`${WAITERS} concurrent waiters on one mailbox receive ${MESSAGES} messages exactly once`, async () => {
  const mailbox = await createTree(pool, { name: "mailbox" });
  const received: string[] = [];
  const perWaiter = new Array<number>(WAITERS).fill(0);
  // One controller per waiter: a signal shared by 20 concurrent waits would exceed the
  // EventTarget listener warning threshold.
  const stops = Array.from({ length: WAITERS }, () => new AbortController());

  async function waiter(index: number): Promise<void> {
    const signal = stops[index]!.signal;
    while (!signal.aborted) {
      try {
        const { result } = await waitForMail(pool, bus, {
          agentId: mailbox.id,
          timeoutSeconds: 2,
          signal,
        });
        if (!("message" in result)) continue;
        received.push(result.message);
        perWaiter[index]!++;
        if (received.length === MESSAGES) stops.forEach((stop) => stop.abort());
      } catch (error) {
        if ((error as Error).name !== "AbortError") throw error;
      }
    }
  }

  async function sender(offset: number): Promise<void> {
    for (let i = offset; i < MESSAGES; i += SENDERS) {
      await sendMail(pool, { treeId: mailbox.id, fromId: null, toId: mailbox.id, body: `m${i}` });
    }
  }

  const waiting = Promise.all(Array.from({ length: WAITERS }, (_, i) => waiter(i)));
  await Promise.all(Array.from({ length: SENDERS }, (_, i) => sender(i)));
  await waiting;

  expect(received).toHaveLength(MESSAGES);
  expect(new Set(received)).toEqual(new Set(Array.from({ length: MESSAGES }, (_, i) => `m${i}`)));
  expect(perWaiter.reduce((a, b) => a + b, 0)).toBe(MESSAGES);

  const counts = await pool.execute<{ total: number; unconsumed: number; events: number }>(sql`
    select count(*)::int as total,
           count(*) filter (where consumed_at is null)::int as unconsumed,
           count(distinct consumed_by_event)::int as events
      from mail where to_id = ${mailbox.id}`);
  expect(counts.rows[0]).toEqual({ total: MESSAGES, unconsumed: 0, events: MESSAGES });

  // Each consuming event belongs to the mailbox and names exactly the mail it consumed.
  const mismatched = await pool.execute<{ n: number }>(sql`
    select count(*)::int as n
      from mail m left join events e on e.id = m.consumed_by_event
     where m.to_id = ${mailbox.id}
       and (e.id is null or e.agent_id <> m.to_id
            or e.data->'mail_ids' <> jsonb_build_array(m.id)
            or (e.content::jsonb)->>'message' <> m.body)`);
  expect(mismatched.rows[0]?.n).toBe(0);
  expect(bus.channelCount()).toBe(0);
}, 120_000);
