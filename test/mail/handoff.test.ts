// Mail handed to a blocked wait in the send's own statement (src/mail/handoff.ts): the waiter
// returns on the notification without a statement of its own, and the wait call's key keeps one
// result per call whoever records it — the send, the wait itself, a timeout or someone else.
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { LeaseLost } from "../../src/agents/errors.js";
import { createTree, forkAgent, setState } from "../../src/agents/tree.js";
import { createBus } from "../../src/bus/bus.js";
import { closeDb, createDb, type Db } from "../../src/db/client.js";
import { sendMail } from "../../src/mail/send.js";
import { sendMailIn } from "../../src/mail/send-fenced.js";
import { waitForMail, type WaitRequest } from "../../src/mail/wait.js";
import { sleep, useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { hold } from "../support/hold.js";
import { blockedOrSettled } from "../support/locks.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
let db: Db;

beforeAll(() => {
  db = database().db;
});

let calls = 0;
/** A wait keyed like the wait tool's (each call its own key), on `on` (default: the test's pool). */
function keyedWait(agentId: string, options: Partial<WaitRequest> = {}, on: Db = db) {
  const key = `r:test:${++calls}`;
  const waiting = waitForMail(on, bus(), {
    agentId,
    timeoutSeconds: 30,
    recheckMs: 60_000,
    record: { kind: "tool_result", data: { name: "wait" }, key },
    ...options,
  });
  return { key, waiting };
}

/** A root and its child; `prompt` starts the child running (an idle one would end a fan-in). */
async function family(prompt?: string) {
  const parent = await createTree(db, { name: "boss" });
  const child = await forkAgent(db, parent.id, { name: "child", context: "fresh", prompt });
  const send = (body: string) =>
    sendMail(db, { treeId: parent.id, fromId: child.id, toId: parent.id, body });
  return { parent, child, send };
}

/** Resolves once `agentId` has a registered wait (it found no mail and is blocking). */
async function registered(agentId: string, key?: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const rows = await db.execute(
        sql`select 1 from mail_waits where agent_id = ${agentId} and key is not null
             and (${key ?? null}::text is null or key = ${key ?? null})`,
      );
      expect(rows.rows).toHaveLength(1);
    },
    { timeout: 5_000, interval: 20 },
  );
}

async function mailRow(id: number) {
  const rows = await db.execute<{ consumed_by_event: string | null }>(
    sql`select consumed_by_event from mail where id = ${id}`,
  );
  return rows.rows[0]!;
}

async function registrations(agentId: string): Promise<number> {
  const rows = await db.execute(
    sql`select 1 from mail_waits where agent_id = ${agentId} and key is not null`,
  );
  return rows.rows.length;
}

describe("handoff", () => {
  it("a send hands its mail to a blocked keyed wait, which returns without a statement of its own", async () => {
    const { parent, child, send } = await family();
    const waiterDb = createDb(database().url, { max: 1 });
    try {
      const { key, waiting } = keyedWait(parent.id, {}, waiterDb);
      await registered(parent.id, key);
      let statements = 0;
      waiterDb.$client.on("acquire", () => statements++);
      const receipt = await send("straight to you");
      const outcome = await waiting;
      expect(receipt.handed).toBe(true);
      expect(statements).toBe(0);
      expect(outcome.result).toEqual({
        from: child.id,
        from_name: "child",
        message: "straight to you",
      });
      expect(outcome.consumedMailIds).toEqual([receipt.mailId]);
      // Recorded as the wait records it: the call's key, the mail consumed by that event.
      const event = await db.execute<{ key: string; kind: string; content: string; data: unknown }>(
        sql`select key, kind, content, data from events where id = ${outcome.eventId}`,
      );
      expect(event.rows[0]).toMatchObject({ key, kind: "tool_result" });
      expect(JSON.parse(event.rows[0]!.content)).toEqual(outcome.result);
      expect(event.rows[0]!.data).toEqual({ name: "wait", mail_ids: [receipt.mailId] });
      expect(Number((await mailRow(receipt.mailId)).consumed_by_event)).toBe(outcome.eventId);
      expect(await registrations(parent.id)).toBe(0);
      // The result's call is counted once, with it.
      const counted = await db.execute<{ tool_calls: number }>(
        sql`select tool_calls from agents where id = ${parent.id}`,
      );
      expect(counted.rows[0]!.tool_calls).toBe(1);
    } finally {
      await closeDb(waiterDb);
    }
  });

  it("a result too large for the notification is read by its key", async () => {
    const { parent, send } = await family();
    const { waiting } = keyedWait(parent.id);
    await registered(parent.id);
    const body = "x".repeat(6_000);
    const receipt = await send(body);
    expect(receipt.handed).toBe(true);
    expect((await waiting).result).toMatchObject({ message: body });
  });

  it("a wait whose call has a result already gets nothing more: the mail stays in the mailbox", async () => {
    const { parent, send } = await family();
    const { key, waiting } = keyedWait(parent.id);
    await registered(parent.id, key);
    // Another writer records the call's result (an interrupt does) while the registration stays.
    const other = await db.execute<{ id: string }>(sql`
      insert into events (agent_id, kind, content, key)
      values (${parent.id}, 'tool_result', '{"error":"interrupted"}', ${key}) returning id`);
    const receipt = await send("for whoever asks next");
    expect(receipt.handed).toBe(false);
    expect((await mailRow(receipt.mailId)).consumed_by_event).toBeNull();
    expect(await registrations(parent.id)).toBe(0);
    // Woken by the mail, the wait finds its call answered: it returns that and takes nothing.
    const outcome = await waiting;
    expect(outcome).toEqual({
      result: { error: "interrupted" },
      eventId: Number(other.rows[0]!.id),
      consumedMailIds: [],
    });
    expect((await mailRow(receipt.mailId)).consumed_by_event).toBeNull();
  });

  it("a wait taking other mail while a send hands it some waits for that send, then returns its result", async () => {
    const { parent, send } = await family();
    const { key, waiting } = keyedWait(parent.id);
    await registered(parent.id, key);
    // A send mid-handoff, held open: it has locked the registration (handoff.ts `hw`).
    const open = hold();
    const handing = db.transaction(async (tx) => {
      await tx.execute(
        sql`select 1 from mail_waits where agent_id = ${parent.id} and key = ${key} for update`,
      );
      open.reached();
      await open.released;
      await tx.execute(sql`
        insert into events (agent_id, kind, content, data, key)
        values (${parent.id}, 'tool_result', '{"from":"human","from_name":"human","message":"mine"}',
                '{"mail_ids":[]}', ${key})`);
      await tx.execute(
        sql`update mail_waits set key = null where agent_id = ${parent.id} and key = ${key}`,
      );
    });
    await open.atPoint;
    // Other mail wakes the wait (this send skips the locked registration), whose look must wait
    // for the registration before it records anything under the call's key.
    const other = await send("other");
    expect(other.handed).toBe(false);
    expect(await blockedOrSettled(db, waiting)).toBe("blocked");
    open.release();
    await handing;
    expect((await waiting).result).toEqual({ from: "human", from_name: "human", message: "mine" });
    expect((await mailRow(other.mailId)).consumed_by_event).toBeNull();
  });

  it("a wait registered under a lease that is no longer the agent's is not handed anything", async () => {
    const { parent, send } = await family();
    await db.execute(
      sql`update agents set lease_owner = 'worker-a', lease_epoch = 7 where id = ${parent.id}`,
    );
    const { waiting } = keyedWait(parent.id, { fence: { owner: "worker-a", epoch: 7 } });
    const settled = waiting.then(
      () => "returned",
      (err: unknown) => err,
    );
    await registered(parent.id);
    // A takeover: another worker claims the agent (a new epoch).
    await db.execute(
      sql`update agents set lease_owner = 'worker-b', lease_epoch = 8 where id = ${parent.id}`,
    );
    const receipt = await send("for the new owner");
    expect(receipt.handed).toBe(false);
    // Woken by the mail, the old owner's wait learns its lease is gone and takes nothing.
    expect(await settled).toBeInstanceOf(LeaseLost);
    expect((await mailRow(receipt.mailId)).consumed_by_event).toBeNull();
  });

  it("an aborted wait takes its registration out: later mail waits in the mailbox", async () => {
    const { parent, send } = await family();
    const controller = new AbortController();
    const { waiting } = keyedWait(parent.id, { signal: controller.signal });
    await registered(parent.id);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: "AbortError" });
    await vi.waitFor(async () => expect(await registrations(parent.id)).toBe(0));
    const receipt = await send("later");
    expect(receipt.handed).toBe(false);
    expect((await mailRow(receipt.mailId)).consumed_by_event).toBeNull();
  });

  it("a second wait of the agent blocking at once takes the registration over; each gets one mail", async () => {
    const { parent, send } = await family();
    const first = keyedWait(parent.id);
    await registered(parent.id, first.key);
    const second = keyedWait(parent.id);
    await registered(parent.id, second.key);
    const one = await send("one");
    expect(one.handed).toBe(true);
    expect((await second.waiting).result).toMatchObject({ message: "one" });
    // The first heard that NOTIFY too, found nothing for itself and registered again.
    await registered(parent.id, first.key);
    const two = await send("two");
    expect(two.handed).toBe(true);
    expect((await first.waiting).result).toMatchObject({ message: "two" });
    // One row per agent, kept and cleared: no row (and no dead index entry) per past wait.
    const rows = await db.execute<{ key: string | null }>(
      sql`select key from mail_waits where agent_id = ${parent.id}`,
    );
    expect(rows.rows).toEqual([{ key: null }]);
  });

  it("a fan-in wait does not register: its child's mail goes in unconsumed and the wait takes it", async () => {
    // A running child: an idle one would end the fan-in at once.
    const { parent, child, send } = await family("go");
    let blocked!: () => void;
    const isBlocked = new Promise<void>((resolve) => (blocked = resolve));
    const { waiting } = keyedWait(parent.id, { fromAgents: [child.id], onBlock: () => blocked() });
    await Promise.race([isBlocked, waiting]);
    expect(await registrations(parent.id)).toBe(0);
    const receipt = await send("from the fan-in's child");
    expect(receipt.handed).toBe(false);
    const outcome = await waiting;
    expect(outcome.result).toMatchObject({
      results: [{ agent_id: child.id, message: "from the fan-in's child" }],
    });
    expect(outcome.consumedMailIds).toEqual([receipt.mailId]);
  });

  it("a wait for mail ignores its children's state hints: no look until mail comes", async () => {
    const { parent, child, send } = await family("go");
    const waiterDb = createDb(database().url, { max: 1 });
    try {
      const { key, waiting } = keyedWait(parent.id, {}, waiterDb);
      await registered(parent.id, key);
      let statements = 0;
      waiterDb.$client.on("acquire", () => statements++);
      // The trigger tells the parent's channel (CHILD_HINT); only a fan-in has use for it.
      await setState(db, child.id, "idle");
      await sleep(300);
      expect(statements).toBe(0);
      const receipt = await send("now");
      expect(receipt.handed).toBe(true);
      expect((await waiting).result).toMatchObject({ message: "now" });
    } finally {
      await closeDb(waiterDb);
    }
  });

  it("a handoff whose notification never arrives is found by the wait's next look", async () => {
    const { parent, send } = await family();
    // A bus that does not listen: the wait re-checks every second instead of hearing NOTIFYs.
    const deaf = await createBus(null);
    try {
      const key = `r:test:${++calls}`;
      const started = Date.now();
      const waiting = waitForMail(db, deaf, {
        agentId: parent.id,
        timeoutSeconds: 30,
        record: { kind: "tool_result", data: { name: "wait" }, key },
      });
      await registered(parent.id, key);
      const receipt = await send("unheard");
      expect(receipt.handed).toBe(true);
      const outcome = await waiting;
      expect(outcome.result).toMatchObject({ message: "unheard" });
      expect(outcome.consumedMailIds).toEqual([receipt.mailId]);
      // Found by a re-check, long before the 30 s timeout would have found it by its key.
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await deaf.close();
    }
  });

  it("an agent's send hands over too, counting each side's call once", async () => {
    const { parent, child } = await family();
    await db.execute(sql`update agents set state = 'waiting', lease_owner = 'w', lease_epoch = 3 where id in
      (${parent.id}, ${child.id})`);
    const { waiting } = keyedWait(parent.id, { fence: { owner: "w", epoch: 3 } });
    await registered(parent.id);
    const receipt = await sendMailIn(
      db,
      { treeId: parent.id, fromId: child.id, toId: parent.id, body: "done", leaseOwner: "w" },
      { key: "r:send:1", epoch: 3, toolCallId: "call_1" },
    );
    expect(receipt.handed).toBe(true);
    expect((await waiting).result).toMatchObject({ from_name: "child", message: "done" });
    const counts = await db.execute<{ id: string; tool_calls: number }>(
      sql`select id, tool_calls from agents where id in (${parent.id}, ${child.id})`,
    );
    expect(counts.rows.map((r) => r.tool_calls)).toEqual([1, 1]);
  });

  // Each send locks its sender's row before the recipient's (handoff.ts `hs`, then `hb` with SKIP
  // LOCKED): without that order the two statements deadlock (PostgreSQL detects it and fails one).
  it("an agent's send repeated after its reply was lost hands nothing to the next wait", async () => {
    const { parent, child } = await family();
    await db.execute(sql`update agents set state = 'waiting', lease_owner = 'w', lease_epoch = 3 where id in
      (${parent.id}, ${child.id})`);
    const sendOnce = () =>
      sendMailIn(
        db,
        { treeId: parent.id, fromId: child.id, toId: parent.id, body: "once", leaseOwner: "w" },
        { key: "r:send:lost", epoch: 3, toolCallId: "call_lost" },
      );
    const first = keyedWait(parent.id, { fence: { owner: "w", epoch: 3 } });
    await registered(parent.id, first.key);
    expect((await sendOnce()).handed).toBe(true);
    expect((await first.waiting).result).toMatchObject({ message: "once" });
    // The parent waits again; the child's retry of the same call is refused whole by its key,
    // the handoff to the new wait with it.
    const controller = new AbortController();
    const next = keyedWait(parent.id, {
      fence: { owner: "w", epoch: 3 },
      signal: controller.signal,
    });
    await registered(parent.id, next.key);
    await expect(sendOnce()).rejects.toMatchObject({ code: "23505" });
    expect(await registrations(parent.id)).toBe(1);
    const mail = await db.execute(sql`select id from mail where to_id = ${parent.id}`);
    expect(mail.rows).toHaveLength(1);
    const counted = await db.execute<{ tool_calls: number }>(
      sql`select tool_calls from agents where id = ${parent.id}`,
    );
    expect(counted.rows[0]!.tool_calls).toBe(1);
    controller.abort();
    await expect(next.waiting).rejects.toMatchObject({ name: "AbortError" });
  });

  it("two agents waiting while they send to each other neither deadlock nor lose mail", async () => {
    const { parent, child } = await family();
    await db.execute(sql`update agents set state = 'waiting', lease_owner = 'w', lease_epoch = 1 where id in
      (${parent.id}, ${child.id})`);
    const rounds = 30;
    let sent = 0;
    for (let i = 0; i < rounds; i++) {
      const a = keyedWait(parent.id, { fence: { owner: "w", epoch: 1 } });
      const b = keyedWait(child.id, { fence: { owner: "w", epoch: 1 } });
      await Promise.all([registered(parent.id, a.key), registered(child.id, b.key)]);
      const sendTo = (from: string, to: string, n: number) =>
        sendMailIn(
          db,
          { treeId: parent.id, fromId: from, toId: to, body: `m${n}`, leaseOwner: "w" },
          { key: `r:x:${++calls}`, epoch: 1, toolCallId: `c${n}` },
        );
      await Promise.all([sendTo(child.id, parent.id, i), sendTo(parent.id, child.id, i)]);
      sent += 2;
      await Promise.all([a.waiting, b.waiting]);
    }
    const mail = await db.execute<{ n: number; consumed: number }>(sql`
      select count(*)::int as n, count(consumed_by_event)::int as consumed from mail
       where to_id in (${parent.id}, ${child.id})`);
    expect(mail.rows[0]).toEqual({ n: sent, consumed: sent });
  });
});

describe("handoff under load", () => {
  it("8 keyed waiters and 8 senders: every mail is received once, by one result", async () => {
    const root = await createTree(db, { name: "root" });
    const waiters = [];
    for (let i = 0; i < 8; i++) {
      waiters.push(await forkAgent(db, root.id, { name: `w${i}`, context: "fresh" }));
    }
    const perWaiter = 60;
    let stop = false;
    const received = new Map<number, number>();
    // Each waiter loops over short keyed waits: some time out, some take mail, some are handed it.
    const loops = waiters.map(async (w) => {
      while (!stop) {
        const { waiting } = keyedWait(w.id, { timeoutSeconds: 0.05 + Math.random() * 0.1 });
        const outcome = await waiting;
        for (const id of outcome.consumedMailIds) received.set(id, (received.get(id) ?? 0) + 1);
      }
    });
    const sends = waiters.flatMap((w) =>
      Array.from({ length: perWaiter }, async (_, n) => {
        await sleep(Math.random() * 1_500);
        return sendMail(db, { treeId: root.id, fromId: root.id, toId: w.id, body: `m${n}` });
      }),
    );
    const receipts = await Promise.all(sends);
    await vi.waitFor(() => expect(received.size).toBe(receipts.length), {
      timeout: 20_000,
      interval: 50,
    });
    stop = true;
    await Promise.all(loops);
    expect([...received.values()].every((n) => n === 1)).toBe(true);
    expect(receipts.some((r) => r.handed)).toBe(true);
    expect(receipts.some((r) => !r.handed)).toBe(true);
    const orphans = await db.execute(sql`
      select m.id from mail m left join events e on e.id = m.consumed_by_event
       where m.tree_id = ${root.id} and (m.consumed_by_event is null or e.id is null)`);
    expect(orphans.rows).toHaveLength(0);
  });
});
