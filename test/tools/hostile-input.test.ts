// Hostile tool arguments (SPEC §2, §3): NUL bytes, lone surrogates and control characters are
// INVALID_ARGS saying what was wrong; nothing reaches the database, nothing comes back as INTERNAL.
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentRow } from "../../src/agents/agents.sql.js";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { bashTool } from "../../src/tools/bash.js";
import { forkTool } from "../../src/tools/fork.js";
import { killTool } from "../../src/tools/kill.js";
import { sendTool } from "../../src/tools/send.js";
import type { ToolOutcome } from "../../src/tools/tool.js";
import { waitTool } from "../../src/tools/wait.js";
import { writeFileTool } from "../../src/tools/write-file.js";
import { useTestDatabase } from "../support/db.js";
import { useBus } from "../support/agents.js";
import { toolContext } from "../support/tool-context.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
let root: AgentRow;
let child: AgentRow;

beforeAll(async () => {
  const { db } = database();
  root = await createTree(db, { name: "root" });
  child = await forkAgent(db, root.id, { name: "child" });
});

function expectInvalid(outcome: ToolOutcome, pattern: RegExp): void {
  expect(outcome.ok, JSON.stringify(outcome)).toBe(false);
  if (outcome.ok) return;
  expect(outcome.error.code).toBe("INVALID_ARGS");
  expect(outcome.error.message).toMatch(pattern);
  expect(outcome.error.message).not.toMatch(/insert|select|update|Failed query/i);
}

describe("agent tools refuse text Postgres cannot store", () => {
  it("fork: NUL or a control character in the name, NUL or a lone surrogate in the prompt", async () => {
    const ctx = await toolContext(database().db, bus(), root.id);
    expectInvalid(await forkTool.run({ name: "a\u0000b", prompt: "go" }, ctx), /NUL byte/);
    expectInvalid(
      await forkTool.run({ name: "x\u001b[2J\u001b]0;pwned\u0007", prompt: "go" }, ctx),
      /control characters \(found \\x1b/,
    );
    expectInvalid(
      await forkTool.run({ name: "ok", prompt: "p\u0000" }, ctx),
      /\/prompt contains a NUL/,
    );
    expectInvalid(await forkTool.run({ name: "ok", prompt: "p\ud800" }, ctx), /lone surrogate/);
    expectInvalid(
      await forkTool.run({ name: "n".repeat(65), prompt: "p" }, ctx),
      /\/name must NOT have more than 64 characters/,
    );
    const rows = await database().db.execute(
      sql`select count(*)::int as n from agents where tree_id = ${root.id}`,
    );
    expect(rows.rows[0]).toEqual({ n: 2 });
  });

  it("send: NUL or a lone surrogate in the message or the reference", async () => {
    const ctx = await toolContext(database().db, bus(), root.id);
    expectInvalid(
      await sendTool.run({ to: "child", message: "hi\u0000" }, ctx),
      /message contains a NUL/,
    );
    expectInvalid(await sendTool.run({ to: "child", message: "\udfff" }, ctx), /not valid UTF-8/);
    expectInvalid(
      await sendTool.run({ to: "ch\u0000ild", message: "hi" }, ctx),
      /\/to contains a NUL/,
    );
    const rows = await database().db.execute(sql`select count(*)::int as n from mail`);
    expect(rows.rows[0]).toEqual({ n: 0 });
  });

  it("wait and kill: a NUL in a reference", async () => {
    const ctx = await toolContext(database().db, bus(), root.id);
    expectInvalid(await waitTool.run({ timeout: 0, from_agents: ["c\u0000"] }, ctx), /NUL/);
    expectInvalid(await killTool.run({ agent_id: "\u0000" }, ctx), /NUL/);
    const after = await database().db.execute(sql`select state from agents where id = ${child.id}`);
    expect(after.rows[0]).toEqual({ state: "idle" });
  });

  it("work tools: a NUL in a command or a path", async () => {
    const ctx = await toolContext(database().db, bus(), root.id);
    expectInvalid(
      await bashTool.run({ command: "echo a\u0000b" }, ctx),
      /\/command contains a NUL/,
    );
    expectInvalid(
      await writeFileTool.run({ path: "a\u0000", content: "x" }, ctx),
      /\/path contains a NUL/,
    );
  });
});
