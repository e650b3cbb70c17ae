// A command file's `allowed-tools` through a running runtime (worker threads, real Postgres, the
// fake model server): the turn the person starts with `/status` (the text the TUI and `-p` send)
// is narrowed to the command's list; the agent's next turn, started by plain input, is not.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { loadConfig } from "../../src/config/config.js";
import { sendInput } from "../../src/mail/input.js";
import { startRuntime, type Runtime } from "../../src/runtime/pool.js";
import { personCommands } from "../../src/skills/listing.js";
import { clearSkillsCache } from "../../src/skills/skills.js";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { after, lastToolResults, lastUserStartsWith, requestsOf } from "../runtime/e2e-support.js";
import { until } from "../feed/rig.js";

const database = useTestDatabase();
const savedHome = process.env.HOME;
const dir = mkdtempSync(path.join(os.tmpdir(), "warren-command-scope-"));
const home = path.join(dir, "home");
const work = path.join(dir, "work");
let fake: FakeModel;
let runtime: Runtime | undefined;

beforeAll(async () => {
  // The person's own command file (never held for trust); the worker threads read this home.
  mkdirSync(path.join(home, ".claude/commands"), { recursive: true });
  mkdirSync(path.join(home, "config/warren"), { recursive: true });
  mkdirSync(work);
  writeFileSync(
    path.join(home, ".claude/commands/status.md"),
    "---\nallowed-tools: Bash(git status:*)\n---\nSTATUS-BODY $ARGUMENTS\n",
  );
  writeFileSync(
    path.join(home, "config/warren/config.json"),
    JSON.stringify({ policy: { bash: "allow" } }),
  );
  process.env.HOME = home;
  clearSkillsCache();
  fake = await startFakeModel();
  const config = loadConfig({
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, "config"),
    WARREN_MODEL: "fake",
    OPENAI_BASE_URL: fake.baseURL,
    OPENAI_API_KEY: "test",
    WARREN_WORKER_THREADS: "1",
  });
  config.model.maxRetries = 0;
  runtime = await startRuntime({ url: database().url, config });
});

afterAll(async () => {
  await runtime?.stop();
  await fake?.close();
  process.env.HOME = savedHome;
  clearSkillsCache();
});

/** The agent's answers (assistant events without tool calls), oldest first. */
async function answers(agentId: string): Promise<string[]> {
  const rows = await database().db.execute<{ content: string }>(sql`
    select content from events
     where agent_id = ${agentId}::uuid and kind = 'assistant'
       and coalesce(jsonb_array_length(data -> 'tool_calls'), 0) = 0
     order by id`);
  return rows.rows.map((r) => r.content);
}

describe("a command file's allowed-tools in a running agent", () => {
  it("narrows the turn /status starts, and not the next one", async () => {
    const db = database().db;
    const echo = (id: string) => ({ id, name: "bash", arguments: { command: "echo hi" } });
    const status = { id: "s1", name: "bash", arguments: { command: "git status" } };
    fake.script([
      {
        agent: "root",
        match: lastUserStartsWith('Use the command "status"'),
        reply: { toolCalls: [echo("e1"), status] },
      },
      { agent: "root", match: after("bash"), reply: { text: "first done" } },
      {
        agent: "root",
        match: lastUserStartsWith("now without it"),
        reply: { toolCalls: [echo("e2")] },
      },
      { agent: "root", match: after("bash"), reply: { text: "second done" } },
    ]);
    const root = await createTree(db, { name: "root", cwd: work });
    const command = personCommands(work, new Set(), { HOME: home }).commands.find(
      (c) => c.name === "status",
    );
    const sent = await command!.expand("look", { cwd: work });
    await sendInput(db, root.id, sent.text);
    await until("the first turn's answer", async () =>
      (await answers(root.id)).length === 1 ? true : undefined,
    );
    await sendInput(db, root.id, "now without it");
    await until("the second turn's answer", async () =>
      (await answers(root.id)).length === 2 ? true : undefined,
    );
    fake.assertAllUsed();
    const [, first, , second] = requestsOf(fake, "root");
    const [refused, allowed] = lastToolResults(first!).map((r) => JSON.stringify(r.value));
    expect(refused).toContain(
      'bash (echo hi) is refused: the command \\"/status\\" is in use for this turn',
    );
    expect(allowed).not.toContain("NOT_ALLOWED");
    const [free] = lastToolResults(second!).map((r) => JSON.stringify(r.value));
    expect(free).not.toContain("NOT_ALLOWED");
    expect(free).toContain("hi");
  }, 60_000);
});
