// killAgent: the cascade over a subtree (rows, events, NOTIFYs) and who may kill whom.
import { and, eq, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { agents, type AgentRow } from "../../src/agents/agents.sql.js";
import { events } from "../../src/agents/events.sql.js";
import { getAgent } from "../../src/agents/refs.js";
import { createTree, forkAgent, killAgent } from "../../src/agents/tree.js";
import { agentChannel, CHILD_HINT } from "../../src/bus/channels.js";
import type { Db } from "../../src/db/client.js";
import { expectAgentError, recordNotifications, useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
let db: Db;

beforeAll(() => {
  db = database().db;
});

describe("killAgent cascade", () => {
  it("kills a 3-level subtree of 50 agents: target first, all dead, one killed event and NOTIFY each", async () => {
    const root = await createTree(db, { name: "root" });
    const bystander = await forkAgent(db, root.id, { name: "bystander", prompt: "keep going" });
    const target = await forkAgent(db, root.id, { name: "target", prompt: "lead" });
    const subtree: AgentRow[] = [target];
    for (let i = 0; i < 7; i++) {
      const lead = await forkAgent(db, target.id, { name: `lead${i}`, prompt: "split up" });
      subtree.push(lead);
      for (let j = 0; j < 6; j++) {
        subtree.push(await forkAgent(db, lead.id, { name: `worker${i}.${j}` }));
      }
    }
    expect(subtree).toHaveLength(50);
    expect(new Set(subtree.map((a) => a.depth))).toEqual(new Set([1, 2, 3]));

    const channels = subtree.map((a) => agentChannel(a.id));
    const recorder = await recordNotifications(bus(), channels);
    const killed = await killAgent(db, { targetId: target.id, byAgentId: root.id });

    expect(killed[0]).toBe(target.id);
    expect(killed).toHaveLength(50);
    expect(new Set(killed)).toEqual(new Set(subtree.map((a) => a.id)));
    const depthOf = new Map(subtree.map((a) => [a.id, a.depth]));
    const depths = killed.map((id) => depthOf.get(id)!);
    expect(depths).toEqual([...depths].sort((a, b) => a - b));

    const rows = await db.select().from(agents).where(inArray(agents.id, killed));
    expect(rows).toHaveLength(50);
    for (const row of rows) {
      expect(row.state).toBe("dead");
      expect(row.ended_at).toBeInstanceOf(Date);
    }
    const killedEvents = await db
      .select()
      .from(events)
      .where(and(eq(events.kind, "killed"), inArray(events.agent_id, killed)));
    expect(killedEvents.map((e) => e.agent_id).sort()).toEqual([...killed].sort());

    await vi.waitFor(() => {
      for (const channel of channels) {
        expect(recorder.payloads(channel).filter((p) => p !== CHILD_HINT)).toEqual(["dead"]);
      }
      // Each parent also hears of its children's deaths (a fan-in of theirs would end): once,
      // as Postgres folds a transaction's identical NOTIFYs into one.
      const hints = (id: string) =>
        recorder.payloads(agentChannel(id)).filter((p) => p === CHILD_HINT).length;
      expect(hints(target.id)).toBe(1);
      expect(hints(subtree[1]!.id)).toBe(1);
      expect(hints(subtree[2]!.id)).toBe(0);
    });
    recorder.stop();

    expect((await getAgent(db, root.id))?.state).toBe("idle");
    expect((await getAgent(db, bystander.id))?.state).toBe("running");
    expect(bus().channelCount()).toBe(0);
  });
});

describe("killAgent permissions", () => {
  // root ─┬─ a ─┬─ a1
  //       │     └─ a2
  //       └─ b
  let root: AgentRow, a: AgentRow, a1: AgentRow, a2: AgentRow, b: AgentRow;

  beforeAll(async () => {
    root = await createTree(db, { name: "root" });
    a = await forkAgent(db, root.id, { name: "a" });
    a1 = await forkAgent(db, a.id, { name: "a1" });
    a2 = await forkAgent(db, a.id, { name: "a2" });
    b = await forkAgent(db, root.id, { name: "b" });
  });

  it("an agent may not kill its parent, a sibling, an uncle or itself", async () => {
    await expectAgentError(killAgent(db, { targetId: a.id, byAgentId: a1.id }), "NOT_ALLOWED");
    await expectAgentError(killAgent(db, { targetId: a2.id, byAgentId: a1.id }), "NOT_ALLOWED");
    await expectAgentError(killAgent(db, { targetId: b.id, byAgentId: a.id }), "NOT_ALLOWED");
    await expectAgentError(killAgent(db, { targetId: b.id, byAgentId: a1.id }), "NOT_ALLOWED");
    await expectAgentError(killAgent(db, { targetId: a1.id, byAgentId: a1.id }), "NOT_ALLOWED");
    const alive = await db.select().from(agents).where(eq(agents.tree_id, root.id));
    expect(alive.every((row) => row.state !== "dead")).toBe(true);
  });

  it("the root is never killed, by an agent or by the person", async () => {
    await expectAgentError(killAgent(db, { targetId: root.id, byAgentId: a.id }), "NOT_ALLOWED");
    await expectAgentError(killAgent(db, { targetId: root.id, byAgentId: null }), "NOT_ALLOWED");
  });

  it("an agent kills its own descendant; a dead target is AGENT_DEAD", async () => {
    expect(await killAgent(db, { targetId: a1.id, byAgentId: a.id })).toEqual([a1.id]);
    await expectAgentError(killAgent(db, { targetId: a1.id, byAgentId: a.id }), "AGENT_DEAD");
    await expectAgentError(killAgent(db, { targetId: a1.id, byAgentId: null }), "AGENT_DEAD");
  });

  it("the person may kill any agent but the root; already dead descendants are skipped", async () => {
    expect(await killAgent(db, { targetId: a.id, byAgentId: null, reason: "done" })).toEqual([
      a.id,
      a2.id,
    ]);
    const [event] = await db
      .select()
      .from(events)
      .where(and(eq(events.agent_id, a.id), eq(events.kind, "killed")));
    expect(event?.data).toMatchObject({ by: null, target: a.id, reason: "done" });
    expect(await killAgent(db, { targetId: b.id, byAgentId: null })).toEqual([b.id]);
  });

  it("an unknown target is UNKNOWN_AGENT", async () => {
    const unknown = "00000000-0000-4000-8000-000000000000";
    await expectAgentError(killAgent(db, { targetId: unknown, byAgentId: null }), "UNKNOWN_AGENT");
  });
});
