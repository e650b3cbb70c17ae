// Search over a tree's transcripts: full-text hits, the substring fallback, dead and reaped agents
// included, other trees left out, the matching line, and that the index serves word queries.
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentRow } from "../../src/agents/agents.sql.js";
import { appendEvent } from "../../src/agents/events.js";
import { createTree, forkAgent, killAgent, reapDead } from "../../src/agents/tree.js";
import type { Db } from "../../src/db/client.js";
import { matchingLine, searchTree } from "../../src/search/search.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();
let db: Db;
let root: AgentRow, alpha: AgentRow, beta: AgentRow, other: AgentRow;

beforeAll(async () => {
  db = database().db;
  root = await createTree(db, { name: "root" });
  alpha = await forkAgent(db, root.id, { name: "alpha" });
  beta = await forkAgent(db, root.id, { name: "beta" });
  other = await createTree(db, { name: "elsewhere" });
  await appendEvent(db, root.id, "user", "please ask the children about the weather");
  await appendEvent(db, alpha.id, "assistant", "Thinking…\nThe Pelican migrates south\nin winter.");
  await appendEvent(db, beta.id, "tool_result", "config: host=a.b port=x1\nnothing else");
  await appendEvent(db, beta.id, "assistant", "beta found the pelican too");
  await appendEvent(db, other.id, "assistant", "a pelican in another tree, and a.b too");
  // Not a kind people read: never a hit.
  await appendEvent(db, root.id, "command", "/send alpha pelican");
  await killAgent(db, { targetId: beta.id, byAgentId: null });
});

describe("searchTree", () => {
  it("finds words through the full-text index, newest first, with agent and line", async () => {
    const hits = await searchTree(db, root.id, "pelican");
    expect(hits.map((h) => [h.agent_name, h.kind, h.line])).toEqual([
      ["beta", "assistant", "beta found the pelican too"],
      ["alpha", "assistant", "The Pelican migrates south"],
    ]);
    expect(hits[0]!.event_id).toBeGreaterThan(hits[1]!.event_id);
    expect(hits[1]!.agent_id).toBe(alpha.id);
    expect(hits[1]!.created_at).toBeInstanceOf(Date);
  });

  it("takes websearch syntax: phrases and negated words", async () => {
    expect((await searchTree(db, root.id, '"pelican migrates"')).map((h) => h.agent_name)).toEqual([
      "alpha",
    ]);
    expect((await searchTree(db, root.id, "pelican -beta")).map((h) => h.agent_name)).toEqual([
      "alpha",
    ]);
  });

  it("falls back to a substring for short or symbol-heavy queries", async () => {
    expect((await searchTree(db, root.id, "a.b")).map((h) => h.line)).toEqual([
      "config: host=a.b port=x1",
    ]);
    expect((await searchTree(db, root.id, "x1")).map((h) => h.agent_name)).toEqual(["beta"]);
    expect((await searchTree(db, root.id, "=")).map((h) => h.line)).toEqual([
      "config: host=a.b port=x1",
    ]);
    // Part of a word: the index knows whole words only, so the substring scan answers.
    expect((await searchTree(db, root.id, "elica")).length).toBe(2);
  });

  it("escapes LIKE wildcards", async () => {
    expect(await searchTree(db, root.id, "%")).toEqual([]);
    expect(await searchTree(db, root.id, "_")).toEqual([]);
  });

  it("includes dead and reaped agents and leaves other trees out", async () => {
    await reapDead(db, root.id);
    const hits = await searchTree(db, root.id, "pelican");
    expect(hits.map((h) => h.agent_name)).toEqual(["beta", "alpha"]);
    expect(hits.some((h) => h.agent_id === other.id)).toBe(false);
    expect((await searchTree(db, other.id, "pelican")).map((h) => h.agent_name)).toEqual([
      "elsewhere",
    ]);
  });

  it("answers nothing for a blank query", async () => {
    expect(await searchTree(db, root.id, "   ")).toEqual([]);
  });

  it("is served by the GIN index for word queries", async () => {
    await db.execute(sql`set enable_seqscan = off`);
    try {
      const plan = await db.execute<{ "QUERY PLAN": string }>(sql`
        explain select id from events
         where kind in ('user', 'assistant', 'tool_call', 'tool_result', 'mail_in', 'mail_out',
                        'capture', 'system', 'error', 'summary')
           and to_tsvector('simple', left(content, 20000)) @@ websearch_to_tsquery('simple', 'x')`);
      expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("events_search_idx");
    } finally {
      await db.execute(sql`reset enable_seqscan`);
    }
  });

  it("stores and finds content larger than a tsvector can hold", async () => {
    const huge = Array.from({ length: 120_000 }, (_, i) => `w${i.toString(36)}x${i}`).join(" ");
    await appendEvent(db, alpha.id, "tool_result", `${huge}\nneedle at the end`);
    const hits = await searchTree(db, root.id, "needle");
    expect(hits.map((h) => h.line)).toEqual(["needle at the end"]);
  });
});

describe("matchingLine", () => {
  it("escapes control characters and trims", () => {
    expect(matchingLine("  \u001b[31mred pelican\u0007  ", "pelican")).toBe(
      "\\x1b[31mred pelican\\x07",
    );
  });

  it("cuts a long line around the match", () => {
    const line = `${"a ".repeat(300)}pelican${" b".repeat(300)}`;
    const shown = matchingLine(line, "pelican");
    expect(shown.length).toBeLessThanOrEqual(200);
    expect(shown).toContain("pelican");
    expect(shown.startsWith("…") && shown.endsWith("…")).toBe(true);
  });
});
