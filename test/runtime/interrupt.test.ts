// interrupt(agent) stops the agent's current turn — model stream or tool processes — records an
// `interrupted` event and leaves it idle, while its children keep running. In-process scheduler.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { createTree } from "../../src/agents/tree.js";
import { createBus, type Bus } from "../../src/bus/bus.js";
import { loadConfig } from "../../src/config/config.js";
import { createOpenAIModel } from "../../src/llm/openai.js";
import { interruptAgent } from "../../src/runtime/interrupt.js";
import { sendMail } from "../../src/mail/send.js";
import { startScheduler, type Scheduler } from "../../src/runtime/scheduler.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();
let fake: FakeModel;
let bus: Bus;
let scheduler: Scheduler;
const workdir = mkdtempSync(path.join(os.tmpdir(), "warren-interrupt-"));

beforeAll(async () => {
  fake = await startFakeModel();
  bus = await createBus(database().url);
  const config = loadConfig({
    HOME: workdir,
    WARREN_MODEL: "fake",
    OPENAI_BASE_URL: fake.baseURL,
  });
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

/** Live host pids whose command line is `command`. */
function liveWithCommand(command: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, "utf8");
        if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return false;
        return (
          readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim() === command
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function kinds(agentId: string): Promise<string[]> {
  const rows = await database().db.execute<{ kind: string }>(
    sql`select kind from events where agent_id = ${agentId} order by id`,
  );
  return rows.rows.map((r) => r.kind);
}

async function state(agentId: string): Promise<string> {
  const rows = await database().db.execute<{ state: string }>(
    sql`select state from agents where id = ${agentId}`,
  );
  return rows.rows[0]!.state;
}

describe("interrupt", () => {
  it("kills the running tool's process group and leaves the agent idle", async () => {
    const pidFile = path.join(workdir, "pid");
    // Found by its command line: under the sandbox (its own PID namespace) `$$` is not a host pid.
    const sleep = `sleep 30.${process.pid}`;
    fake.script({
      agent: "sleeper",
      reply: {
        toolCalls: [{ name: "bash", arguments: { command: `echo $$ > ${pidFile}; ${sleep}` } }],
      },
    });
    const agent = await createTree(database().db, {
      name: "sleeper",
      prompt: "sleep",
      cwd: workdir,
    });
    await until("the command to start", async () => {
      try {
        return readFileSync(pidFile, "utf8").trim().length > 0;
      } catch {
        return false;
      }
    });
    await until("the sleep to run", async () => liveWithCommand(sleep).length > 0);
    expect(await interruptAgent(database().db, agent.id)).toBe(true);
    await until("the agent to go idle", async () => (await state(agent.id)) === "idle");
    expect(liveWithCommand(sleep)).toEqual([]);
    expect(await kinds(agent.id)).toEqual([
      "user",
      "assistant",
      "tool_call",
      "tool_result",
      "interrupted",
    ]);
    const result = await database().db.execute<{ content: string }>(
      sql`select content from events where agent_id = ${agent.id} and kind = 'tool_result'`,
    );
    expect(JSON.parse(result.rows[0]!.content).error.message).toBe("interrupted by the person");
    expect(await interruptAgent(database().db, agent.id)).toBe(false);
    fake.assertAllUsed();
  });

  it("aborts a hanging model stream but not the agent's children", async () => {
    fake.script([
      {
        agent: "parent-x",
        reply: {
          toolCalls: [
            {
              name: "fork",
              arguments: { name: "child-x", prompt: "work slowly", context: "fresh" },
            },
          ],
        },
      },
      { agent: "parent-x", reply: { hang: true } },
      { agent: "child-x", reply: { hang: true } },
    ]);
    const parent = await createTree(database().db, {
      name: "parent-x",
      prompt: "go",
      cwd: workdir,
    });
    await until(
      "both model calls to hang",
      async () =>
        fake.requests.filter((r) => /Your name: (parent|child)-x/.test(r.systemPrompt ?? ""))
          .length >= 3,
    );
    await interruptAgent(database().db, parent.id);
    await until("the parent to go idle", async () => (await state(parent.id)) === "idle");
    expect((await kinds(parent.id)).at(-1)).toBe("interrupted");
    const child = await database().db.execute<{ id: string; state: string }>(
      sql`select id, state from agents where parent_id = ${parent.id}`,
    );
    expect(child.rows[0]!.state).toBe("running");
    await interruptAgent(database().db, child.rows[0]!.id);
    await until("the child to go idle", async () => (await state(child.rows[0]!.id)) === "idle");
    fake.assertAllUsed();
  });

  it("keeps the text streamed before the interrupt as a partial answer the next turn sees", async () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    let chunks = 0;
    fake.script([
      {
        agent: "streamer-x",
        reply: { text: words, chunkSize: 12, chunkDelayMs: 150, onChunk: () => void chunks++ },
      },
      { agent: "streamer-x", reply: { text: "picking up" } },
    ]);
    const agent = await createTree(database().db, {
      name: "streamer-x",
      prompt: "talk",
      cwd: workdir,
    });
    await until("a few deltas to stream", async () => chunks >= 4);
    await interruptAgent(database().db, agent.id);
    await until("the agent to go idle", async () => (await state(agent.id)) === "idle");
    const events = await database().db.execute<{
      kind: string;
      content: string;
      data: Record<string, unknown> | null;
    }>(sql`select kind, content, data from events where agent_id = ${agent.id} order by id`);
    expect(events.rows.map((e) => e.kind).slice(-2)).toEqual(["assistant", "interrupted"]);
    const partial = events.rows.at(-2)!;
    expect(partial.content.length).toBeGreaterThan(0);
    expect(words.startsWith(partial.content)).toBe(true);
    expect(partial.content.length).toBeLessThan(words.length);
    expect(partial.data).toMatchObject({ partial: true, finish_reason: "interrupted" });
    // The live text ended with it: no stream row is left live.
    const live = await database().db.execute(
      sql`select 1 from agent_streams where agent_id = ${agent.id} and live`,
    );
    expect(live.rows).toHaveLength(0);

    await sendMail(database().db, {
      treeId: agent.tree_id,
      fromId: null,
      toId: agent.id,
      body: "go on",
    });
    await until("the next answer", async () => (await kinds(agent.id)).at(-1) === "assistant");
    const next = fake.requests
      .filter((r) => /Your name: streamer-x/.test(r.systemPrompt ?? ""))
      .at(-1)!;
    expect(next.messages.some((m) => m.role === "assistant" && m.content === partial.content)).toBe(
      true,
    );
    fake.assertAllUsed();
  });

  it("takes mail that arrived during the interrupted turn and answers it", async () => {
    fake.script([
      { agent: "busy-m", reply: { hang: true } },
      {
        agent: "busy-m",
        match: (req) => (req.lastMessage?.content ?? "").includes("while you were busy"),
        reply: { text: "got it" },
      },
    ]);
    const agent = await createTree(database().db, { name: "busy-m", prompt: "go", cwd: workdir });
    await until("the model call to hang", async () =>
      fake.requests.some((r) => /Your name: busy-m/.test(r.systemPrompt ?? "")),
    );
    await sendMail(database().db, {
      treeId: agent.tree_id,
      fromId: null,
      toId: agent.id,
      body: "while you were busy",
    });
    await interruptAgent(database().db, agent.id);
    await until("the mail to be answered", async () =>
      (await kinds(agent.id)).join(",").endsWith("interrupted,mail_in,assistant"),
    );
    await until("the agent to go idle", async () => (await state(agent.id)) === "idle");
    const unread = await database().db.execute(
      sql`select 1 from mail where to_id = ${agent.id} and consumed_at is null`,
    );
    expect(unread.rows).toHaveLength(0);
    fake.assertAllUsed();
  });
});
