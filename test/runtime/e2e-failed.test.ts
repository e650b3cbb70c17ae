// End to end through `bin/warren -p`: an agent whose model requests fail for good (a 404 for its
// model) is `failed`, never `idle` — in its parent's fan-in wait, in `warren ls`, and on `-p`'s
// stderr (issue 40 §6).
import { describe, expect, it } from "vitest";
import {
  after,
  agentNamed,
  forkedIds,
  isFirst,
  lastToolResults,
  requestsOf,
  useE2E,
} from "./e2e-support.js";

const e2e = useE2E();

const NOT_FOUND = "The model `gpt-missing` does not exist or you do not have access to it.";

describe("a failed agent", () => {
  it("is failed with the server's message in its parent's wait, in ls and on -p's stderr", async () => {
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: ["lost", "fine"].map((name) => ({
            name: "fork",
            arguments: { name, prompt: `task for ${name}`, context: "fresh" },
          })),
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: (req) => {
          const ids = forkedIds(req);
          return {
            toolCalls: [
              { name: "wait", arguments: { timeout: 30, from_agents: [ids.lost, ids.fine] } },
            ],
          };
        },
      },
      { agent: "root", match: after("wait"), reply: { text: "one of two failed" } },
      { agent: "lost", reply: { status: 404, text: NOT_FOUND } },
      { agent: "fine", reply: { text: "fine is done" } },
    ]);

    const run = await e2e.prompt("split the work");
    // The root answered: exit 0, but the failed child is named on stderr, in one line.
    expect(run.code).toBe(0);
    expect(run.json?.text).toBe("one of two failed");
    const db = e2e.db();
    const treeId = run.json!.tree_id;
    const lost = await agentNamed(db, treeId, "lost");
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`^warren: agent lost ${lost.id.slice(0, 8)} failed: .*404.*does not exist`),
    );

    expect(run.json as unknown).toMatchObject({
      failed_agents: [
        { agent_id: lost.id, name: "lost", error: expect.stringContaining(NOT_FOUND) },
      ],
    });
    expect(run.json).not.toHaveProperty("error");

    // The parent's wait: the failed child is `failed` with the server's message, never `idle`.
    const waited = lastToolResults(requestsOf(fake, "root")[2]!);
    expect(waited).toHaveLength(1);
    const { results } = waited[0]!.value as {
      results: { name: string; status: string; error?: string }[];
    };
    expect(results.map((r) => [r.name, r.status])).toEqual([
      ["lost", "failed"],
      // Its final text is mailed to its parent (issue 42): received, not idle.
      ["fine", "received"],
    ]);
    expect(results[0]!.error).toMatch(/404/);
    expect(results[0]!.error).toContain(NOT_FOUND);
    expect(results[1]!.error).toBeUndefined();

    // The row: still idle (it takes mail like any idle agent), with its failure.
    expect(lost.state).toBe("idle");
    expect(lost.failure).toContain(NOT_FOUND);
    expect((await agentNamed(db, treeId, "fine")).failure).toBeNull();

    const listed = await e2e.warren(["ls", "--tree", treeId]);
    expect(listed.code).toBe(0);
    const row = listed.stdout.split("\n").find((line) => line.includes("lost"));
    expect(row).toMatch(/lost\s.*\bfailed\b/);
    expect(listed.stdout.split("\n")[0]).toMatch(/1 failed/);
  });

  it("as the root: exit 1 with the server's message on stderr", async () => {
    const fake = e2e.fake();
    fake.script({ agent: "root", reply: { status: 404, text: NOT_FOUND } });
    const run = await e2e.prompt("hello", { json: false });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^warren: .*404.*does not exist/);
    expect(fake.requests).toHaveLength(1);
  });
});
