// interruptSubtree(agent) stops the turns of an agent and all its descendants — a hanging model
// stream each — and every one of them stays alive: idle, and answering the next mail it gets.
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { createTree } from "../../src/agents/tree.js";
import { createBus, type Bus } from "../../src/bus/bus.js";
import { loadConfig } from "../../src/config/config.js";
import { createOpenAIModel } from "../../src/llm/openai.js";
import { interruptSubtree } from "../../src/runtime/interrupt.js";
import { sendMail } from "../../src/mail/send.js";
import { startScheduler, type Scheduler } from "../../src/runtime/scheduler.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();
let fake: FakeModel;
let bus: Bus;
let scheduler: Scheduler;
const workdir = mkdtempSync(path.join(os.tmpdir(), "warren-stop-"));

beforeAll(async () => {
  fake = await startFakeModel();
  bus = await createBus(database().url);
  const config = loadConfig({ HOME: workdir, WARREN_MODEL: "fake", OPENAI_BASE_URL: fake.baseURL });
  scheduler = await startScheduler(
    {
      db: database().db,
      bus,
      model: createOpenAIModel({ baseURL: fake.baseURL, maxRetries: 0 }),
      config,
    },
    { concurrency: 10, leaseSeconds: 10, pollMs: 200 },
  );
});
afterAll(async () => {
  await scheduler.stop();
  await bus.close();
  await fake.close();
});

async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function agentsOf(treeId: string): Promise<{ id: string; name: string; state: string }[]> {
  const rows = await database().db.execute<{ id: string; name: string; state: string }>(
    sql`select id, name, state from agents where tree_id = ${treeId} order by created_at, id`,
  );
  return rows.rows;
}

async function kinds(agentId: string): Promise<string[]> {
  const rows = await database().db.execute<{ kind: string }>(
    sql`select kind from events where agent_id = ${agentId} order by id`,
  );
  return rows.rows.map((r) => r.kind);
}

const hanging = (name: string) =>
  fake.requests.filter((r) => new RegExp(`Your name: ${name}$`, "m").test(r.systemPrompt ?? ""))
    .length;

describe("interruptSubtree", () => {
  it("stops a parent and its two running children; all stay alive and take new mail", async () => {
    const fork = (name: string) => ({
      name: "fork",
      arguments: { name, prompt: "work slowly", context: "fresh" },
    });
    fake.script([
      { agent: "boss", reply: { toolCalls: [fork("kid-a"), fork("kid-b")] } },
      { agent: "boss", reply: { hang: true } },
      { agent: "kid-a", reply: { hang: true } },
      { agent: "kid-b", reply: { delayMs: 60_000, text: "too late" } },
    ]);
    const root = await createTree(database().db, { name: "boss", prompt: "go", cwd: workdir });
    await until(
      "all three model calls to be in flight",
      async () => hanging("boss") >= 2 && hanging("kid-a") >= 1 && hanging("kid-b") >= 1,
    );
    expect((await agentsOf(root.id)).map((a) => a.state)).toEqual([
      "running",
      "running",
      "running",
    ]);

    const stopped = await interruptSubtree(database().db, root.id);
    expect(stopped).toHaveLength(3);
    await until("every agent to go idle", async () =>
      (await agentsOf(root.id)).every((a) => a.state === "idle"),
    );
    const all = await agentsOf(root.id);
    for (const agent of all) expect((await kinds(agent.id)).at(-1)).toBe("interrupted");
    // Nothing is left to stop: idle agents are not flagged (their next turn runs in full).
    expect(await interruptSubtree(database().db, root.id)).toEqual([]);

    // Alive: each answers the next mail in a new turn.
    fake.script(
      all.map((agent) => ({
        agent: agent.name,
        match: (req) => (req.lastMessage?.content ?? "").includes(`more work for ${agent.name}`),
        reply: { text: `done ${agent.name}` },
      })),
    );
    for (const agent of all) {
      await sendMail(database().db, {
        treeId: root.id,
        fromId: null,
        toId: agent.id,
        body: `more work for ${agent.name}`,
      });
    }
    for (const agent of all) {
      await until(`${agent.name} to answer its mail`, async () =>
        (await kinds(agent.id)).join(",").endsWith("interrupted,mail_in,assistant"),
      );
    }
    await until("every agent to go idle again", async () =>
      (await agentsOf(root.id)).every((a) => a.state === "idle"),
    );
    fake.assertAllUsed();
  });
});
