// A fork never widens (SPEC §3, issue 28): a child's capabilities are its parent's narrowed by what
// the fork asks, dimension by dimension, whatever the profile or `budget` says, down the tree.
// Through the real runtime: in-process scheduler, fake model over HTTP, real Postgres. Each test
// has a control (the same ask from a parent that has the capability) so it can tell.
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentRow } from "../../src/agents/agents.sql.js";
import { capabilitiesOf, childCapabilities } from "../../src/agents/capabilities.js";
import { getAgent } from "../../src/agents/refs.js";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { createBus, type Bus } from "../../src/bus/bus.js";
import { loadConfig, type Config } from "../../src/config/config.js";
import { createOpenAIModel } from "../../src/llm/openai.js";
import { startScheduler, type Scheduler } from "../../src/runtime/scheduler.js";
import { createActions } from "../../src/ui/actions.js";
import { createController } from "../../src/ui/controller.js";
import { useTestDatabase } from "../support/db.js";
import { agentNameOf, startFakeModel, type FakeModel } from "../support/fake-model.js";
import { after } from "../runtime/e2e-support.js";

const database = useTestDatabase();
let fake: FakeModel;
let bus: Bus;
let scheduler: Scheduler;
let config: Config;
const workdir = mkdtempSync(path.join(os.tmpdir(), "warren-narrow-"));

const PROFILES = {
  reader: { tools: ["read_file", "glob", "grep", "fork", "send", "wait"] },
  worker: { tools: ["bash", "read_file", "fork", "send", "wait"] },
  confined: { file_access: "cwd" },
  free: { file_access: "any" },
  strict: { policy: { bash: { deny: ["touch *"] } } },
  permissive: { policy: { bash: "allow" } },
  sealed: { sandbox: "on" },
  open: { sandbox: "off" },
};

beforeAll(async () => {
  fake = await startFakeModel();
  bus = await createBus(database().url);
  const home = mkdtempSync(path.join(os.tmpdir(), "warren-narrow-home-"));
  mkdirSync(path.join(home, ".config", "warren"), { recursive: true });
  writeFileSync(
    path.join(home, ".config", "warren", "config.json"),
    JSON.stringify({
      file_access: "any",
      policy: { bash: "allow" },
      profiles: PROFILES,
      limits: { maxDepth: 2 },
    }),
  );
  config = loadConfig({ HOME: home, WARREN_MODEL: "fake", OPENAI_BASE_URL: fake.baseURL });
  scheduler = await startScheduler(
    {
      db: database().db,
      bus,
      model: createOpenAIModel({ baseURL: fake.baseURL, maxRetries: 0 }),
      config,
    },
    { concurrency: 4, leaseSeconds: 10, pollMs: 200 },
  );
});
afterAll(async () => {
  await scheduler.stop();
  await bus.close();
  await fake.close();
});

async function until<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function agentNamed(name: string): Promise<AgentRow> {
  return until(`agent ${name}`, async () => {
    const rows = await database().db.execute<{ id: string }>(
      sql`select id from agents where name = ${name}`,
    );
    const id = rows.rows[0]?.id;
    return id ? getAgent(database().db, id) : undefined;
  });
}

/** The first tool result the named agent got, parsed. */
async function resultOf(name: string): Promise<Record<string, unknown>> {
  const agent = await agentNamed(name);
  const text = await until(`${name}'s tool result`, async () => {
    const rows = await database().db.execute<{ content: string }>(
      sql`select content from events where agent_id = ${agent.id} and kind = 'tool_result'
           order by id limit 1`,
    );
    return rows.rows[0]?.content;
  });
  return JSON.parse(text) as Record<string, unknown>;
}

/** `name` forks each child (fresh context, so each child's requests carry its own name). */
function forks(name: string, children: { name: string; profile?: string; budget?: object }[]) {
  fake.script([
    {
      agent: name,
      reply: {
        toolCalls: children.map((c) => ({
          name: "fork",
          arguments: { ...c, prompt: "go", context: "fresh" },
        })),
      },
    },
    { agent: name, match: after("fork"), reply: { text: "forked" } },
  ]);
}

/** `name` makes one call, then ends its turn. */
function calls(name: string, tool: string, args: object) {
  fake.script([
    { agent: name, reply: { toolCalls: [{ name: tool, arguments: args }] } },
    { agent: name, match: after(tool), reply: { text: "done" } },
  ]);
}

function offered(name: string): string[] {
  const request = fake.requests.find((r) => agentNameOf(r) === name);
  if (!request) throw new Error(`${name} made no model request`);
  return request.tools;
}

const root = (name: string, budget = {}) =>
  createTree(database().db, { name, prompt: "go", cwd: workdir, approve: "none", budget });

describe("a fork never widens", () => {
  it("tools: a reader's grandchild gets no bash, with no profile or with one that lists bash", async () => {
    const plainMark = path.join(workdir, "plain-ran");
    const workerMark = path.join(workdir, "worker-ran");
    const controlMark = path.join(workdir, "control-ran");
    forks("tools-root", [
      { name: "tools-reader", profile: "reader" },
      { name: "tools-control", profile: "worker" },
    ]);
    forks("tools-reader", [{ name: "tools-plain" }, { name: "tools-worker", profile: "worker" }]);
    calls("tools-plain", "bash", { command: `touch ${plainMark}` });
    calls("tools-worker", "bash", { command: `touch ${workerMark}` });
    calls("tools-control", "bash", { command: `touch ${controlMark}` });
    await root("tools-root");

    expect(await resultOf("tools-control")).toMatchObject({ exit_code: 0 });
    expect(existsSync(controlMark)).toBe(true);
    for (const name of ["tools-plain", "tools-worker"]) {
      expect((await resultOf(name)).error).toMatchObject({ code: "INVALID_ARGS" });
      expect(offered(name)).not.toContain("bash");
      // send and wait always, so that it can report.
      expect(offered(name)).toEqual(expect.arrayContaining(["send", "wait"]));
    }
    expect(offered("tools-worker")).toEqual(["fork", "read_file", "send", "wait"]);
    expect(existsSync(plainMark)).toBe(false);
    expect(existsSync(workerMark)).toBe(false);
  });

  it("file access: a confined child's grandchild with file_access any cannot read /etc/hostname", async () => {
    forks("files-root", [
      { name: "files-boxed", profile: "confined" },
      { name: "files-control", profile: "free" },
    ]);
    forks("files-boxed", [{ name: "files-escaper", profile: "free" }]);
    calls("files-escaper", "read_file", { path: "/etc/hostname" });
    calls("files-control", "read_file", { path: "/etc/hostname" });
    await root("files-root");

    expect((await resultOf("files-control")).error).toBeUndefined();
    expect((await resultOf("files-escaper")).error).toMatchObject({ code: "NOT_ALLOWED" });
    expect((await agentNamed("files-escaper")).caps?.file_access).toBe("cwd");
  });

  it("budget: turns 1000000 is capped by the parent's remaining turns, down the tree", async () => {
    forks("budget-root", [{ name: "budget-child", budget: { turns: 1_000_000 } }]);
    forks("budget-child", [{ name: "budget-grandchild", budget: { turns: 1_000_000 } }]);
    fake.script({ agent: "budget-grandchild", reply: { text: "done" } });
    await root("budget-root", { turns: 4 });

    // The root is in its first turn: 3 left. The child's first turn leaves it 2.
    expect((await agentNamed("budget-child")).budget.turns).toBe(3);
    expect((await agentNamed("budget-grandchild")).budget.turns).toBe(2);
  });

  it("budget: a parent with nothing left of a budget cannot fork", async () => {
    const parent = await createTree(database().db, { name: "spent-root", budget: { turns: 1 } });
    expect(() => childCapabilities(config, { ...parent, turns: 1 }, {})).toThrow(
      /turns budget is used up/,
    );
    expect(childCapabilities(config, parent, { budget: { turns: 9 } }).budget.turns).toBe(1);
  });

  it("sandbox: a sandboxed child's grandchild with sandbox off stays sandboxed", async () => {
    forks("sandbox-root", [{ name: "sandbox-sealed", profile: "sealed" }]);
    forks("sandbox-sealed", [{ name: "sandbox-opened", profile: "open" }]);
    fake.script({ agent: "sandbox-opened", reply: { text: "done" } });
    await root("sandbox-root");

    const opened = await agentNamed("sandbox-opened");
    expect(opened.caps?.sandbox).toBe("on");
    expect(capabilitiesOf(config, opened).sandbox).toBe("on");
  });

  it("policy: a grandchild's permissive profile does not lift its parent's deny", async () => {
    const deniedMark = path.join(workdir, "denied-ran");
    const controlMark = path.join(workdir, "policy-control-ran");
    forks("policy-root", [
      { name: "policy-strict", profile: "strict" },
      { name: "policy-control", profile: "permissive" },
    ]);
    forks("policy-strict", [{ name: "policy-lifted", profile: "permissive" }]);
    calls("policy-lifted", "bash", { command: `touch ${deniedMark}` });
    calls("policy-control", "bash", { command: `touch ${controlMark}` });
    await root("policy-root");

    expect(await resultOf("policy-control")).toMatchObject({ exit_code: 0 });
    expect((await resultOf("policy-lifted")).error).toMatchObject({ code: "NOT_ALLOWED" });
    expect(existsSync(deniedMark)).toBe(false);
  });

  it("depth: no profile or budget forks past the depth limit", async () => {
    forks("depth-root", [{ name: "depth-child" }]);
    forks("depth-child", [{ name: "depth-grandchild" }]);
    forks("depth-grandchild", [{ name: "depth-too-deep", profile: "free" }]);
    await root("depth-root");

    expect((await resultOf("depth-grandchild")).error).toMatchObject({ code: "LIMIT_EXCEEDED" });
    const rows = await database().db.execute(
      sql`select 1 from agents where name = 'depth-too-deep'`,
    );
    expect(rows.rows).toHaveLength(0);
  });

  it("the TUI's /fork narrows the same way: a reader's /fork child gets no bash", async () => {
    const { db } = database();
    const top = await createTree(db, { name: "ui-root", cwd: workdir });
    const reader = await forkAgent(db, top.id, {
      name: "ui-reader",
      context: "fresh",
      ...childCapabilities(config, top, { profile: config.profiles.reader }),
    });
    const controller = createController({
      db,
      feed: {
        treeId: top.id,
        subscribe: () => () => {},
        watchStreams: () => {},
        close: async () => {},
      },
      rootId: top.id,
      onChange: () => {},
      onError: (message) => expect.fail(message),
    });
    await controller.start();
    await controller.view(reader.id);
    const actions = createActions({
      db,
      config,
      controller,
      helpLines: () => [],
      treeLines: () => [],
      search: () => {},
      tasks: () => {},
      quit: () => {},
      onChange: () => {},
    });
    await actions.submit("/fork --name ui-grandchild");
    const grandchild = await agentNamed("ui-grandchild");
    controller.close();
    expect(grandchild.parent_id).toBe(reader.id);
    expect(capabilitiesOf(config, grandchild).tools).toEqual([
      "fork",
      "glob",
      "grep",
      "read_file",
      "send",
      "wait",
    ]);
    expect(grandchild.budget.turns).toBe(config.budget.turns);
  });
});
