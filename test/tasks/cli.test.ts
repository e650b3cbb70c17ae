// The board end to end: a root run by `warren -p` plans two tasks (the second after the first),
// claims and finishes both through the real runtime, gets the first's result with the second, and
// finds the board empty; `warren tasks` then prints the board, and --help says what it is.
import { describe, expect, it } from "vitest";
import type { RecordedRequest } from "../support/fake-model.js";
import { after, useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();

/** The JSON of the newest tool result the model was sent. */
function lastResult(req: RecordedRequest): Record<string, unknown> {
  const tool = req.messages.filter((m) => m.role === "tool").at(-1);
  return JSON.parse(tool?.content ?? "{}") as Record<string, unknown>;
}

const call = (name: string, args: object) => ({ toolCalls: [{ name, arguments: args }] });

describe("warren tasks", () => {
  it("shows the board an agent planned and worked through", async () => {
    let first = "";
    const claims: Record<string, unknown>[] = [];
    e2e.fake().script([
      { agent: "root", reply: call("task_add", { title: "design the schema" }) },
      {
        agent: "root",
        match: after("task_add"),
        reply: (req) => {
          first = lastResult(req).task_id as string;
          return call("task_add", { title: "write the api", depends_on: [first] });
        },
      },
      {
        agent: "root",
        match: after("task_add"),
        reply: call("task_claim", { timeout: 5 }),
      },
      {
        agent: "root",
        match: after("task_claim"),
        times: 2,
        reply: (req) => {
          const claimed = lastResult(req);
          claims.push(claimed);
          return call("task_done", { task_id: claimed.task_id, result: `did ${claimed.title}` });
        },
      },
      { agent: "root", match: after("task_done"), times: 2, reply: call("task_claim", {}) },
      { agent: "root", match: after("task_claim"), reply: { text: "all done" } },
    ]);
    const run = await e2e.prompt("plan and do it");
    expect(run.code).toBe(0);
    expect(run.json?.text).toBe("all done");
    expect(claims[0]).toMatchObject({ title: "design the schema", depends_on: [] });
    expect(claims[1]).toMatchObject({
      title: "write the api",
      depends_on: [{ task_id: first, title: "design the schema", result: "did design the schema" }],
    });
    const last = e2e.fake().requests.at(-1)!;
    expect(lastResult(last)).toEqual({ status: "empty" });

    const json = await e2e.warren(["tasks", "--json"]);
    expect(json.code).toBe(0);
    const board = JSON.parse(json.stdout) as { tasks: { title: string; state: string }[] };
    expect(board.tasks.map((t) => [t.title, t.state])).toEqual([
      ["design the schema", "done"],
      ["write the api", "done"],
    ]);
    const text = await e2e.warren(["tasks"]);
    expect(text.stdout).toContain("design the schema");
    expect(text.stdout).toMatch(
      /done\s+\w{8}\s+write the api\s+by root \w{8}\s+→ did write the api/,
    );
    expect(text.stdout).toContain("2 tasks: 2 done");
  });

  it("--help says what it shows; a bad option is a one-line usage error", async () => {
    const help = await e2e.warren(["tasks", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: warren tasks [--tree ID] [--json]");
    const bad = await e2e.warren(["tasks", "--nope"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split("\n")[0]).toMatch(/nope/);
  });
});
