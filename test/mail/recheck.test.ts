// The shared safety re-check (recheck.ts): every wait blocked on one bus is re-checked by one
// query per interval, not one query per wait, and a mail whose NOTIFY never came still wakes its
// wait. The bus here hears nothing (LISTEN off), so the sweep runs every second.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { createBus, type Bus } from "../../src/bus/bus.js";
import type { Db } from "../../src/db/client.js";
import { waitForMail } from "../../src/mail/wait.js";
import { sleep } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();
let deaf: Bus;

beforeAll(async () => {
  deaf = await createBus(null);
});
afterAll(async () => {
  await deaf.close();
});

/** The database handle, counting the statements sent through it. */
function counting(db: Db): { db: Db; count: () => number } {
  let n = 0;
  const client = new Proxy(db.$client, {
    get(target, prop, receiver) {
      if (prop !== "query") return Reflect.get(target, prop, receiver) as unknown;
      return (...args: unknown[]) => {
        n++;
        return (target.query as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
  const wrapped = new Proxy(db, {
    get(target, prop, receiver) {
      return prop === "$client" ? client : (Reflect.get(target, prop, receiver) as unknown);
    },
  });
  return { db: wrapped, count: () => n };
}

describe("blocked waits on one bus", () => {
  it("are re-checked together, and a mail without its NOTIFY still wakes its wait", async () => {
    const { db, count } = counting(database().db);
    const roots = await Promise.all(
      Array.from({ length: 20 }, (_, i) => createTree(database().db, { name: `w${i}` })),
    );
    const controller = new AbortController();
    const waits = roots.map((r) =>
      waitForMail(db, deaf, { agentId: r.id, timeoutSeconds: 30, signal: controller.signal }),
    );
    await sleep(500); // every wait has made its first attempt and blocked
    const before = count();
    await sleep(3_000);
    // About three sweeps in three seconds; one re-check per wait per second would be 60.
    expect(count() - before).toBeLessThanOrEqual(6);

    const target = roots[7]!;
    // Inserted behind the runtime's back: no NOTIFY.
    await database().db.execute(sql`
      insert into mail (tree_id, from_id, to_id, body) values (${target.id}, null, ${target.id}, 'quiet')`);
    const woken = await Promise.race([waits[7]!, sleep(5_000).then(() => undefined)]);
    expect(woken?.result).toMatchObject({ message: "quiet" });
    controller.abort();
    await Promise.allSettled(waits);
  });
});
