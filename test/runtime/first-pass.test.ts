// The agents one claim gives a scheduler start with their first passes read in one statement
// (scheduler.ts, pass-read.ts readPasses), not one statement each. Watched on the wire: `warren -p`
// with one worker thread talks to Postgres through a proxy that counts every statement.
import { describe, expect, it } from "vitest";
import { usePgProxy } from "../support/use-pg-proxy.js";
import { isFirst, after, treeAgents, useE2E } from "./e2e-support.js";

const e2e = useE2E();
const proxy = usePgProxy(() => e2e.db().$client.options.connectionString!);

const CHILDREN = ["a", "b", "c", "d"];

/** The pass reads' statements (first or later, of any number of agents) sent so far. */
const passReads = () =>
  [...proxy().traffic().byStatement]
    .filter(([text]) =>
      text.startsWith("with t as ( select * from unnest($1::uuid[], $2::bigint[])"),
    )
    .reduce((n, [, count]) => n + count, 0);

describe("a claim's first passes", () => {
  it("are read in one statement for the children a response forked together", async () => {
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: CHILDREN.map((name) => ({
            name: "fork",
            arguments: { name, prompt: `do ${name}`, context: "fresh" },
          })),
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: { toolCalls: [{ name: "wait", arguments: { timeout: 30, from_agents: CHILDREN } }] },
      },
      { agent: "root", match: after("wait"), reply: { text: "all four done" } },
      ...CHILDREN.map((name) => ({ agent: name, match: isFirst, reply: { text: `${name} done` } })),
    ]);
    const url = e2e.db().$client.options.connectionString!;
    const run = await e2e.prompt("start four children", {
      timeout: 30,
      env: { DATABASE_URL: proxy().urlFor(url), WARREN_WORKER_THREADS: "1" },
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.json?.text).toBe("all four done");
    const agents = await treeAgents(e2e.db(), run.json!.tree_id);
    expect(agents.map((a) => a.state)).toEqual(Array(1 + CHILDREN.length).fill("idle"));
    // The root's three passes (its first, after the forks, after the wait), and the children's
    // first passes: one statement for the claim that took all four (two, should the claim
    // split); one each would make seven.
    expect(passReads()).toBeGreaterThanOrEqual(4);
    expect(passReads()).toBeLessThan(3 + CHILDREN.length);
  });
});
