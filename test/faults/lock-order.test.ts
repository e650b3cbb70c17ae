// One lock order (SPEC §5, agents/lock-order.ts): many clients forking, killing, sending and
// heart-beating on one tree at once never deadlock (no 40P01), and a kill racing a fork never
// leaves a living agent under a dead parent.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAgentError } from "../../src/agents/errors.js";
import { DEFAULT_LIMITS } from "../../src/agents/limits.js";
import { createTree, forkAgent, killAgent } from "../../src/agents/tree.js";
import { closeDb, createDb, type Db } from "../../src/db/client.js";
import { sendMailIn } from "../../src/mail/send-fenced.js";
import { heartbeat } from "../../src/runtime/leases.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();
const CLIENTS = 8;
const RUN_MS = 5_000;
const limits = { ...DEFAULT_LIMITS, maxChildren: 12, maxAgentsPerTree: 10_000 };
let clients: Db[] = [];

beforeAll(() => {
  clients = Array.from({ length: CLIENTS }, () => createDb(database().url, { max: 2 }));
});
afterAll(async () => {
  await Promise.all(clients.map(closeDb));
});

const pick = <T>(list: T[]): T | undefined => list[Math.floor(Math.random() * list.length)];

type Living = {
  id: string;
  parent_id: string | null;
  depth: number;
};

async function living(db: Db, treeId: string): Promise<Living[]> {
  const rows = await db.execute<Living>(sql`
    select id, parent_id, depth from agents where tree_id = ${treeId} and state <> 'dead'`);
  return rows.rows;
}

describe("lock order", () => {
  it("concurrent forks, kills, sends and heartbeats on one tree: no deadlock, no orphan", async () => {
    const root = await createTree(database().db, { name: "root" });
    await database().db.execute(sql`update agents set lease_owner = 'hb' where id = ${root.id}`);
    const unexpected: unknown[] = [];
    const counts = { fork: 0, kill: 0, send: 0, beat: 0 };
    let serial = 0;
    const deadline = Date.now() + RUN_MS;

    const act = async (db: Db, role: number): Promise<void> => {
      while (Date.now() < deadline) {
        const agents = await living(db, root.id);
        try {
          const kind = role % 4 === 3 ? "beat" : pick(["fork", "fork", "kill", "send"])!;
          if (kind === "fork") {
            const parent = pick(agents.filter((a) => a.depth < 3));
            if (!parent) continue;
            const child = await forkAgent(db, parent.id, { name: `a${serial++}` }, limits);
            await db.execute(sql`update agents set lease_owner = 'hb' where id = ${child.id}`);
          } else if (kind === "kill") {
            const target = pick(agents.filter((a) => a.parent_id !== null && a.depth >= 2));
            if (!target) continue;
            await killAgent(db, { targetId: target.id, byAgentId: null });
          } else if (kind === "send") {
            const [from, to] = [pick(agents), pick(agents)];
            if (!from || !to || from.id === to.id) continue;
            await db.transaction((tx) =>
              sendMailIn(tx, { treeId: root.id, fromId: from.id, toId: to.id, body: "hi" }),
            );
          } else {
            // Every living agent, in a random order: the statement must lock them in lock order.
            const ids = agents.map((a) => a.id).sort(() => Math.random() - 0.5);
            await heartbeat(db, "hb", ids, 30);
          }
          counts[kind as keyof typeof counts]++;
        } catch (err) {
          if (isAgentError(err) && err.code !== "INTERNAL") continue; // dead, unknown, limits
          unexpected.push(err);
        }
      }
    };
    await Promise.all(clients.map((db, i) => act(db, i)));

    const codes = unexpected.map((e) => {
      const cause = (e as { cause?: { code?: string } }).cause;
      return cause?.code ?? (e as { code?: string }).code ?? String(e);
    });
    expect(codes, String(unexpected[0])).toEqual([]);
    expect(counts.fork).toBeGreaterThan(50);
    expect(counts.kill).toBeGreaterThan(10);
    expect(counts.beat).toBeGreaterThan(10);
    const orphans = await database().db.execute<{ id: string }>(sql`
      select c.id from agents c join agents p on p.id = c.parent_id
       where c.tree_id = ${root.id} and c.state <> 'dead' and p.state = 'dead'`);
    expect(orphans.rows).toEqual([]);
  });
});
