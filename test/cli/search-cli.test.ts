// `warren search` end to end: the real bin/warren against a test database — hits with agent, time
// and line, a dead agent's included, another tree's left out, "no matches", --json, --help, usage.
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentRow } from "../../src/agents/agents.sql.js";
import { appendEvent } from "../../src/agents/events.js";
import { createTree, forkAgent, killAgent } from "../../src/agents/tree.js";
import { useTestDatabase } from "../support/db.js";
import { runWarren, warrenEnv } from "../support/warren.js";

const database = useTestDatabase();
let root: AgentRow, scout: AgentRow, other: AgentRow;
const warren = (args: string[]) =>
  runWarren(["search", ...args], warrenEnv({ databaseUrl: database().url }));

beforeAll(async () => {
  const db = database().db;
  root = await createTree(db, { name: "root" });
  scout = await forkAgent(db, root.id, { name: "scout" });
  await appendEvent(
    db,
    scout.id,
    "assistant",
    "First line\n  the otter \u001b[31mswims\u001b[0m here  \nlast",
  );
  await killAgent(db, { targetId: scout.id, byAgentId: null });
  other = await createTree(db, { name: "other" });
  await appendEvent(db, other.id, "assistant", "another otter, elsewhere");
});

describe("warren search", () => {
  it("prints agent, time and the matching line of every hit in the tree, dead agents included", async () => {
    const run = await warren(["otter", "--tree", root.id.slice(0, 8)]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^scout ${scout.id.slice(0, 8)}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d  the otter \\\\x1b\\[31mswims\\\\x1b\\[0m here$`,
      ),
    );
  });

  it("searches the most recent tree by default", async () => {
    const run = await warren(["otter"]);
    expect(run.stdout).toContain("another otter, elsewhere");
    expect(run.stdout).not.toContain("scout");
  });

  it("says no matches, exit 0", async () => {
    const run = await warren(["zebra", "--tree", root.id]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("no matches\n");
  });

  it("prints JSON with --json", async () => {
    const run = await warren(["ott", "--tree", root.id, "--json"]);
    expect(run.code).toBe(0);
    const hits = JSON.parse(run.stdout) as Record<string, unknown>[];
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({
      agent_id: scout.id,
      agent_name: "scout",
      kind: "assistant",
      line: "the otter \\x1b[31mswims\\x1b[0m here",
    });
    expect(typeof hits[0]!.event_id).toBe("number");
    expect(new Date(hits[0]!.created_at as string).getTime()).not.toBeNaN();
  });

  it("has --help, and wants TEXT", async () => {
    const help = await warren(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: warren search TEXT");
    const missing = await warren([]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing TEXT");
  });
});
