// A blocked `wait` holds no scheduler slot (issue 7): with `concurrency: 4`, a root waiting for 4
// parents, each waiting for 10 children, runs to completion — the waiting parents give their slots
// to their children — and never more than 4 turns call the model at once.
import { describe, expect, it } from "vitest";
import type { Rule } from "../support/fake-model.js";
import { after, forkedIds, isFirst, lastToolResults, requestsOf, useE2E } from "./e2e-support.js";

const e2e = useE2E();
const PARENTS = 4;
const CHILDREN = 10;
const CONCURRENCY = 4;
const MODEL_DELAY_MS = 150;

/** Forks `names`, waits for all of them, then `then`. */
function forkAndWait(agent: string, names: string[], then: Rule["reply"]): Rule[] {
  return [
    {
      agent,
      match: isFirst,
      reply: {
        delayMs: MODEL_DELAY_MS,
        toolCalls: names.map((name) => ({ name: "fork", arguments: { name, prompt: "work" } })),
      },
    },
    {
      agent,
      match: after("fork"),
      reply: (req) => {
        const ids = forkedIds(req);
        return {
          delayMs: MODEL_DELAY_MS,
          toolCalls: [
            { name: "wait", arguments: { timeout: 40, from_agents: names.map((n) => ids[n]) } },
          ],
        };
      },
    },
    { agent, match: after("wait"), reply: then },
  ];
}

function reportsToParent(agent: string, message: string): Rule[] {
  return [
    {
      agent,
      match: isFirst,
      reply: {
        delayMs: MODEL_DELAY_MS,
        toolCalls: [{ name: "send", arguments: { to: "parent", message } }],
      },
    },
    { agent, match: after("send"), reply: { delayMs: MODEL_DELAY_MS, text: `${agent} done` } },
  ];
}

/** The most requests that arrived within one model delay of each other (all still in flight). */
function mostAtOnce(arrivals: number[]): number {
  const sorted = [...arrivals].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= MODEL_DELAY_MS) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe("a blocked wait", () => {
  it("gives its slot to the agents it waits for", { timeout: 120_000 }, async () => {
    const fake = e2e.fake();
    const parents = Array.from({ length: PARENTS }, (_, p) => `p${p}`);
    const childrenOf = (parent: string) =>
      Array.from({ length: CHILDREN }, (_, c) => `${parent}-c${c}`);
    fake.script([
      ...forkAndWait("root", parents, { delayMs: MODEL_DELAY_MS, text: "every parent reported" }),
      ...parents.flatMap((parent) => [
        ...forkAndWait(parent, childrenOf(parent), {
          delayMs: MODEL_DELAY_MS,
          toolCalls: [{ name: "send", arguments: { to: "parent", message: `${parent} all in` } }],
        }),
        {
          agent: parent,
          match: after("send"),
          reply: { delayMs: MODEL_DELAY_MS, text: `${parent} done` },
        },
        ...childrenOf(parent).flatMap((child) => reportsToParent(child, `${child} result`)),
      ]),
    ]);

    const run = await e2e.prompt("fan out twice", {
      timeout: 100,
      config: { concurrency: CONCURRENCY, worker_threads: 2 },
    });
    expect(run.stderr).toBe("");
    expect(run.json?.text).toBe("every parent reported");

    // Every wait saw every agent it waited for report: none was still running at its timeout.
    for (const agent of ["root", ...parents]) {
      const last = requestsOf(fake, agent).find(after("wait"))!;
      const waited = lastToolResults(last)[0]!.value as { results: { status: string }[] };
      expect(waited.results.map((r) => r.status)).toEqual(waited.results.map(() => "received"));
    }
    // The slots still bound the work: never more than CONCURRENCY model calls in flight.
    expect(fake.requests).toHaveLength(3 + PARENTS * 4 + PARENTS * CHILDREN * 2);
    expect(mostAtOnce(fake.requests.map((r) => r.receivedAt))).toBeLessThanOrEqual(CONCURRENCY);
  });
});
