// A command file's `allowed-tools` through a running runtime (worker threads, real Postgres, the
// fake model server): the turn the person starts with `/status` (the text the TUI and `-p` send)
// is narrowed to the command's list; the agent's next turn, started by plain input, is not.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { sendInput } from "../../src/mail/input.js";
import { personCommands } from "../../src/skills/listing.js";
import { clearSkillsCache } from "../../src/skills/skills.js";
import { after, lastToolResults, lastUserStartsWith, requestsOf } from "../runtime/e2e-support.js";
import { until, useRuntime } from "../feed/rig.js";

// The person's own command file (never held for trust), in a home the worker threads take with
// the environment they start with.
const savedHome = process.env.HOME;
const dir = mkdtempSync(path.join(os.tmpdir(), "warren-command-scope-"));
const home = path.join(dir, "home");
const work = path.join(dir, "work");
mkdirSync(path.join(home, ".claude/commands"), { recursive: true });
mkdirSync(work);
writeFileSync(
  path.join(home, ".claude/commands/status.md"),
  "---\nallowed-tools: Bash(git status:*)\n---\nSTATUS-BODY $ARGUMENTS\n",
);
process.env.HOME = home;
clearSkillsCache();
const rig = useRuntime();

afterAll(() => {
  process.env.HOME = savedHome;
  clearSkillsCache();
});

/** The agent's answers (assistant events without tool calls), oldest first. */
async function answers(agentId: string): Promise<string[]> {
  const rows = await rig.database().db.execute<{ content: string }>(sql`
    select content from events
     where agent_id = ${agentId}::uuid and kind = 'assistant'
       and coalesce(jsonb_array_length(data -> 'tool_calls'), 0) = 0
     order by id`);
  return rows.rows.map((r) => r.content);
}

describe("a command file's allowed-tools in a running agent", () => {
  it("narrows the turn /status starts, and not the next one", async () => {
    const db = rig.database().db;
    const fake = rig.fake();
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
    // bash is asked by default: this tree answers "all", so what the narrowing lets through runs.
    const root = await createTree(db, { name: "root", cwd: work, approve: "all" });
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
