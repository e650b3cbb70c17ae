// An MCP call and the agent's life around it: interrupted (`warren stop`), the server is told
// (MCP's notifications/cancelled) and the turn ends; the warren process killed -9 mid-call, the
// next process answers the call "interrupted" as for bash and never sends it again; a call still
// waiting for its approval when its worker stopped is asked again and then runs once. Real
// processes (`bin/warren`, needs `npm run build`), the fault server (fixtures/fault-server.mjs,
// which notes each call and cancellation in CALLS_FILE), the fake model, real Postgres.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { answerApproval, listPending } from "../../src/approvals/approvals.js";
import { createTree } from "../../src/agents/tree.js";
import { createBus, type Bus } from "../../src/bus/bus.js";
import { loadConfig } from "../../src/config/config.js";
import type { Db } from "../../src/db/client.js";
import { createOpenAIModel } from "../../src/llm/openai.js";
import { refreshCatalog } from "../../src/mcp/catalog.js";
import { closeMcpConnections } from "../../src/mcp/connections.js";
import { startScheduler } from "../../src/runtime/scheduler.js";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { runWarren, startWarren, warrenEnv } from "../support/warren.js";
import { after, isFirst } from "../runtime/e2e-support.js";

const database = useTestDatabase();
let fake: FakeModel;
let bus: Bus;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const FAULTS = path.join(root, "test/mcp/fixtures/fault-server.mjs");

beforeAll(async () => {
  fake = await startFakeModel();
  bus = await createBus(database().url);
});
afterAll(async () => {
  await closeMcpConnections();
  await bus.close();
  await fake.close();
});
afterEach(() => {
  fake.assertAllUsed();
});

/** A config file with the fault server as `fx`, its calls noted in the returned file. */
function setup(extra: object = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "warren-mcp-cancel-"));
  const calls = path.join(dir, "calls");
  const file = path.join(dir, "config.json");
  writeFileSync(
    file,
    JSON.stringify({
      mcp_servers: {
        // Its working directory is writable in its sandbox: the calls file lies there.
        fx: { command: process.execPath, args: [FAULTS], env: { CALLS_FILE: calls }, cwd: dir },
      },
      policy: { "mcp__*": "allow" },
      ...extra,
    }),
  );
  const env = warrenEnv({
    databaseUrl: database().url,
    modelUrl: fake.baseURL,
    // Short leases: a killed process's agents are taken over quickly.
    extra: { WARREN_CONFIG: file, WARREN_LEASE_SECONDS: "2" },
  });
  return { dir, calls, env, file };
}

function seen(calls: string): string[] {
  return existsSync(calls) ? readFileSync(calls, "utf8").trim().split("\n").filter(Boolean) : [];
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function latestRoot(db: Db): Promise<{ id: string; state: string } | undefined> {
  const rows = await db.execute<{ id: string; state: string }>(
    sql`select id, state from agents where parent_id is null order by created_at desc limit 1`,
  );
  return rows.rows[0];
}

async function eventsOf(db: Db, agentId: string) {
  const rows = await db.execute<{ kind: string; content: string; data: Record<string, unknown> }>(
    sql`select kind, content, data from events where agent_id = ${agentId} order by id`,
  );
  return rows.rows;
}

const slowCall = (agent = "root") => ({
  agent,
  match: isFirst,
  reply: { toolCalls: [{ name: "mcp__fx__slow", arguments: {} }] },
});

describe("an MCP call in flight", () => {
  it("interrupted: the server gets notifications/cancelled and the turn ends", async () => {
    const { calls, env } = setup();
    expect((await runWarren(["mcp", "list"], env)).stdout).toContain("mcp__fx__slow");
    fake.script([slowCall()]);
    // `slow` answers after 60 s: past this run's --timeout, so only the interrupt ends it in time.
    const run = startWarren(["-p", "be slow", "--json", "--timeout", "45"], env);
    await until("the server to get the call", () =>
      seen(calls).includes("call slow") ? true : undefined,
    );
    const tree = (await latestRoot(database().db))!;
    const stopped = await runWarren(["stop", "root", "--tree", tree.id], env);
    expect(stopped.stderr).toBe("");
    expect(stopped.stdout).toMatch(/^stopped 1 agent/);
    const done = await run.done;
    expect(done.code, done.stderr).toBe(0);
    // The server was told by the client (a reason string), not by the connection closing.
    const cancelled = seen(calls).filter((l) => l.startsWith("cancelled slow: "));
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]).not.toBe("cancelled slow: closed");
    const events = await eventsOf(database().db, tree.id);
    expect(events.at(-1)?.kind).toBe("interrupted");
    expect(seen(calls).filter((l) => l === "call slow")).toHaveLength(1);
  }, 120_000);

  it("killed -9 with its warren: the next process answers it interrupted and never sends it again", async () => {
    const { calls, env } = setup();
    expect((await runWarren(["mcp", "list"], env)).stdout).toContain("mcp__fx__slow");
    fake.script([
      slowCall(),
      {
        agent: "root",
        match: (req) => String(req.lastMessage?.content ?? "").includes("interrupted"),
        reply: { text: "resumed after the crash" },
      },
    ]);
    const first = startWarren(["-p", "be slow"], env);
    await until("the server to get the call", () =>
      seen(calls).includes("call slow") ? true : undefined,
    );
    const tree = (await latestRoot(database().db))!;
    first.child.kill("SIGKILL");
    await first.done;

    const worker = startWarren(["worker"], env);
    try {
      await until("the resumed turn to end", async () =>
        (await latestRoot(database().db))?.state === "idle" ? true : undefined,
      );
    } finally {
      worker.child.kill("SIGTERM");
      await worker.done;
    }
    const events = await eventsOf(database().db, tree.id);
    const results = events.filter((e) => e.kind === "tool_result");
    expect(results).toHaveLength(1);
    expect(results[0]!.data).toMatchObject({ name: "mcp__fx__slow", interrupted: true });
    // Exactly bash's answer (runtime/context.ts INTERRUPTED_RESULT).
    expect(JSON.parse(results[0]!.content)).toEqual({
      error: {
        code: "INTERNAL",
        message: "interrupted: this call did not finish (it may have partly run)",
      },
    });
    expect(events.filter((e) => e.kind === "assistant").at(-1)?.content).toBe(
      "resumed after the crash",
    );
    // The server saw the call once: the next process did not send it again.
    expect(seen(calls).filter((l) => l.startsWith("call "))).toEqual(["call slow"]);
  }, 120_000);
});

describe("an MCP call waiting for approval when its worker stopped", () => {
  it("is asked again by the next worker and, allowed, reaches the server once", async () => {
    // No policy: MCP tools are asked (`ask` by default).
    const { calls, env } = setup({ policy: {} });
    const config = loadConfig(env);
    await refreshCatalog(database().db, config.mcpServers);
    fake.script([
      {
        agent: "asker",
        reply: { toolCalls: [{ name: "mcp__fx__ok", arguments: {} }] },
      },
      { agent: "asker", match: after("mcp__fx__ok"), reply: { text: "done" } },
    ]);
    const deps = () => ({
      db: database().db,
      bus,
      model: createOpenAIModel({ baseURL: fake.baseURL, maxRetries: 0 }),
      config,
    });
    const agent = await createTree(database().db, {
      name: "asker",
      prompt: "go",
      cwd: root,
      approve: "ask",
    });
    const options = { concurrency: 2, leaseSeconds: 10, pollMs: 200, treeId: agent.tree_id };
    const first = await startScheduler(deps(), options);
    const request = await until("the request", async () =>
      (await listPending(database().db)).find((p) => p.agent_id === agent.id),
    );
    await first.stop(); // the worker goes away while the call waits
    expect(seen(calls)).toEqual([]);

    const second = await startScheduler(deps(), options);
    try {
      await until("the same request, held by the next worker", async () => {
        const rows = await database().db.execute<{ owner: string | null }>(
          sql`select lease_owner as owner from agents where id = ${agent.id}`,
        );
        return rows.rows[0]?.owner === second.owner ? true : undefined;
      });
      const pending = (await listPending(database().db)).filter((p) => p.agent_id === agent.id);
      expect(pending.map((p) => p.id)).toEqual([request.id]);
      await answerApproval(database().db, request.id, { allow: true, by: "person (test)" });
      await until("the turn to end", async () => {
        const rows = await database().db.execute<{ state: string }>(
          sql`select state from agents where id = ${agent.id}`,
        );
        return rows.rows[0]?.state === "idle" ? true : undefined;
      });
    } finally {
      await second.stop();
    }
    expect(seen(calls)).toEqual(["call ok"]);
    const results = (await eventsOf(database().db, agent.id)).filter(
      (e) => e.kind === "tool_result",
    );
    expect(results).toHaveLength(1);
    expect(JSON.parse(results[0]!.content)).toMatchObject({
      output: expect.stringMatching(/^pid/),
    });
  }, 120_000);
});
