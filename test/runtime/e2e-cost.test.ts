// End to end through `bin/warren`: the config's prices turn each agent's token counters into
// dollars — `-p --json` reports the tree's `cost_usd`, `ls` each agent's and the tree's — and the
// `usd` budgets end turns with an `error` event: `budget.usd` one agent's, `root_budget.usd` the
// whole tree's.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { runWarren, warrenEnv } from "../support/warren.js";
import { after, agentNamed, eventsOf, isFirst, requestsOf } from "./e2e-support.js";

const database = useTestDatabase();
let fake: FakeModel;
beforeEach(async () => {
  fake = await startFakeModel();
});
afterEach(async () => {
  try {
    fake.assertAllUsed();
  } finally {
    await fake.close();
  }
});

/** warren with this config file (WARREN_MODEL is "fake-model"). */
function withConfig(config: object) {
  const home = mkdtempSync(path.join(os.tmpdir(), "warren-cost-"));
  mkdirSync(path.join(home, "warren"));
  writeFileSync(path.join(home, "warren", "config.json"), JSON.stringify(config));
  const env = warrenEnv({
    databaseUrl: database().url,
    modelUrl: fake.baseURL,
    extra: { XDG_CONFIG_HOME: home },
  });
  return (args: string[]) => runWarren(args, env);
}

const PRICE = { input: 0.4, cached_input: 0.1, output: 1.6 };
/** What PRICE makes of one response's usage, in dollars. */
const usd = (u: { input: number; output: number; cached?: number }) =>
  ((u.input - (u.cached ?? 0)) * 0.4 + (u.cached ?? 0) * 0.1 + u.output * 1.6) / 1e6;

const send = (message: string) => ({ name: "send", arguments: { to: "parent", message } });
const waitFor = (name: string) => ({
  name: "wait",
  arguments: { timeout: 30, from_agents: [name] },
});

describe("cost", () => {
  it("-p --json reports the tree's cost_usd; ls each agent's and the total", async () => {
    const usage = {
      rootFork: { input: 120_000, output: 3_000, cached: 20_000 },
      rootWait: { input: 150_000, output: 2_000, cached: 100_000 },
      rootEnd: { input: 160_000, output: 9_000 },
      helperSend: { input: 50_000, output: 1_000, cached: 10_000 },
      helperEnd: { input: 60_000, output: 500, cached: 40_000 },
    };
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [{ name: "fork", arguments: { name: "helper", prompt: "say hi" } }],
          usage: usage.rootFork,
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: { toolCalls: [waitFor("helper")], usage: usage.rootWait },
      },
      { agent: "root", match: after("wait"), reply: { text: "done", usage: usage.rootEnd } },
      {
        agent: "helper",
        match: isFirst,
        reply: { toolCalls: [send("hi")], usage: usage.helperSend },
      },
      { agent: "helper", match: after("send"), reply: { text: "sent", usage: usage.helperEnd } },
    ]);
    const warren = withConfig({ prices: { "fake-model": PRICE } });
    const run = await warren(["-p", "get the helper to say hi", "--json", "--timeout", "60"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout) as { tree_id: string; cost_usd: number };
    const rootUsd = usd(usage.rootFork) + usd(usage.rootWait) + usd(usage.rootEnd);
    const helperUsd = usd(usage.helperSend) + usd(usage.helperEnd);
    expect(json.cost_usd).toBeCloseTo(rootUsd + helperUsd, 10);

    const ls = await warren(["ls", "--tree", json.tree_id, "--json"]);
    const agents = JSON.parse(ls.stdout) as { name: string; cost_usd: number }[];
    expect(agents.find((a) => a.name === "root")!.cost_usd).toBeCloseTo(rootUsd, 10);
    expect(agents.find((a) => a.name === "helper")!.cost_usd).toBeCloseTo(helperUsd, 10);
    const totals = JSON.parse(
      (await warren(["ls", "--tree", json.tree_id, "--totals", "--json"])).stdout,
    );
    expect(totals.cost_usd).toBeCloseTo(rootUsd + helperUsd, 10);

    const text = (await warren(["ls", "--tree", json.tree_id])).stdout;
    const cost = (n: number) => `$${n.toFixed(4)}`;
    expect(text).toMatch(/AGENT\s+STATE.*ACTIVE\s+COST/);
    expect(text).toMatch(new RegExp(`root [0-9a-f]{8}\\s.*\\s\\${cost(rootUsd)}\\n`));
    expect(text).toMatch(new RegExp(`helper [0-9a-f]{8}\\s.*\\s\\${cost(helperUsd)}\\n`));
    expect(text).toContain(`· cost ${cost(rootUsd + helperUsd)}`);

    // Without a price: tokens only, and cost_usd null.
    const unpriced = withConfig({ prices: { "another-model": PRICE } });
    const plain = await unpriced(["ls", "--tree", json.tree_id]);
    expect(plain.stdout).not.toContain("COST");
    expect(plain.stdout).not.toContain("$");
    const nulls = JSON.parse((await unpriced(["ls", "--tree", json.tree_id, "--json"])).stdout);
    expect(nulls.map((a: { cost_usd: unknown }) => a.cost_usd)).toEqual([null, null]);
  });

  it("budget.usd: a child's turn ends with the budget error after its first response", async () => {
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: { toolCalls: [{ name: "fork", arguments: { name: "spender", prompt: "go" } }] },
      },
      { agent: "root", match: after("fork"), reply: { toolCalls: [waitFor("spender")] } },
      { agent: "root", match: after("wait"), reply: { text: "spender reported" } },
      {
        agent: "spender",
        match: isFirst,
        reply: { toolCalls: [send("started")], usage: { input: 1_000, output: 100 } },
      },
    ]);
    const warren = withConfig({ prices: { "fake-model": PRICE }, budget: { usd: 0.0001 } });
    const run = await warren(["-p", "spend", "--json", "--timeout", "60"]);
    expect(run.code).toBe(0);
    const treeId = (JSON.parse(run.stdout) as { tree_id: string }).tree_id;
    const spender = await agentNamed(database().db, treeId, "spender");
    expect(spender.state).toBe("idle");
    const last = (await eventsOf(database().db, spender.id)).at(-1)!;
    expect(last.kind).toBe("error");
    // $0.00056 spent: 1000·0.4 + 100·1.6 per million.
    expect(last.content).toBe(
      "cost budget exhausted ($0.0006 of $0.0001); the agent stops here and goes idle",
    );
    expect(requestsOf(fake, "spender")).toHaveLength(1);
  });

  it("root_budget.usd: crossing it stops the whole tree", async () => {
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [{ name: "fork", arguments: { name: "spender", prompt: "go" } }],
          usage: { input: 100_000, output: 0 }, // $0.04
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: { toolCalls: [waitFor("spender")], usage: { input: 100_000, output: 0 } },
      },
      {
        agent: "spender",
        match: isFirst,
        // Answers once the root waits: the tree crosses $0.10 only with this response.
        reply: { toolCalls: [send("started")], usage: { input: 100_000, output: 0 }, delayMs: 500 },
      },
    ]);
    const warren = withConfig({ prices: { "fake-model": PRICE }, root_budget: { usd: 0.1 } });
    const run = await warren(["-p", "spend", "--json", "--timeout", "60"]);
    const line =
      "tree cost budget exhausted ($0.1200 of $0.1000 for the whole tree); the agent stops here and goes idle";
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`warren: ${line}`);
    const json = JSON.parse(run.stdout) as { tree_id: string; error: string; cost_usd: number };
    expect(json.error).toBe(line);
    expect(json.cost_usd).toBeCloseTo(0.12, 10);
    for (const name of ["root", "spender"]) {
      const agent = await agentNamed(database().db, json.tree_id, name);
      expect(agent.state).toBe("idle");
      const last = (await eventsOf(database().db, agent.id)).at(-1)!;
      expect([last.kind, last.content]).toEqual(["error", line]);
    }
    expect(requestsOf(fake, "spender")).toHaveLength(1);
    expect(requestsOf(fake, "root")).toHaveLength(2);
  });
});
