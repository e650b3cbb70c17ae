// End to end: what a prompt cache serves of inherited forks (SPEC §7, issue 31). The fake model
// server keeps a prefix cache and reports, for each request, the tokens of its longest prefix it
// saw before as cached_tokens; the counters on each agent's row and `warren ls` show exactly that.
import { describe, expect, it } from "vitest";
import { after, forkedIds, isTask, requestsOf, useE2E } from "./e2e-support.js";
import type { RecordedRequest } from "../support/fake-model.js";

const e2e = useE2E({ usage: "measured" });

const names = ["alpha", "beta", "gamma"];
const sum = (reqs: RecordedRequest[], key: "cachedTokens" | "promptTokens") =>
  reqs.reduce((n, r) => n + r[key], 0);

describe("prefix cache", () => {
  it("serves an inherited child's first request from its parent's; ls shows what the server reported", async () => {
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: (req) => req.messages.length === 2,
        reply: {
          toolCalls: names.map((name) => ({
            name: "fork",
            arguments: { name, prompt: `Do part ${name} and send me the result.` },
          })),
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: (req) => ({
          toolCalls: [
            {
              name: "wait",
              arguments: { timeout: 30, from_agents: names.map((n) => forkedIds(req)[n]) },
            },
          ],
        }),
      },
      { agent: "root", match: after("wait"), reply: { text: "all three reported" } },
      ...names.flatMap((name) => [
        {
          agent: name,
          match: isTask,
          reply: {
            toolCalls: [
              { name: "send", arguments: { to: "parent", message: `part ${name} done` } },
            ],
          },
        },
        { agent: name, match: after("send"), reply: { text: "Sent." } },
      ]),
    ]);
    const run = await e2e.prompt(`Split this brief three ways. ${"A long brief. ".repeat(600)}`);
    expect(run.stderr).toBe("");
    expect(run.json?.text).toBe("all three reported");
    const treeId = run.json!.tree_id;

    const rootRequests = requestsOf(fake, "root");
    const forking = rootRequests[0]!;
    for (const name of names) {
      const [childFirst, childNext] = requestsOf(fake, name);
      // Its parent's request byte for byte, then one message: at least 95 % served from cache.
      expect(childFirst!.messages.slice(0, -1)).toEqual(forking.messages);
      expect(childFirst!.cachedTokens / childFirst!.promptTokens).toBeGreaterThanOrEqual(0.95);
      // Its next request extends its first.
      expect(childNext!.messages.slice(0, childFirst!.messages.length)).toEqual(
        childFirst!.messages,
      );
      expect(childNext!.cachedTokens).toBeGreaterThanOrEqual(childFirst!.promptTokens - 1);
    }

    // Each agent's counters are what the server reported for its requests, and ls shows them.
    const listed = await e2e.warren(["ls", "--json", "--tree", treeId]);
    expect(listed.code).toBe(0);
    const agents = JSON.parse(listed.stdout) as {
      name: string;
      input_tokens: number;
      cached_tokens: number;
    }[];
    expect(agents.map((a) => a.name).sort()).toEqual(["root", ...names].sort());
    for (const agent of agents) {
      const reqs = requestsOf(fake, agent.name);
      expect([agent.name, Number(agent.cached_tokens), Number(agent.input_tokens)]).toEqual([
        agent.name,
        sum(reqs, "cachedTokens"),
        sum(reqs, "promptTokens"),
      ]);
    }
    const totals = await e2e.warren(["ls", "--totals", "--json", "--tree", treeId]);
    expect(JSON.parse(totals.stdout)).toMatchObject({
      cached_tokens: sum(fake.requests, "cachedTokens"),
      input_tokens: sum(fake.requests, "promptTokens"),
    });
  });
});
