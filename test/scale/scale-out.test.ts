// Scale-out (issue 7 §7): three `warren worker` processes and `warren -p` build a 156-agent tree,
// one worker killed by SIGKILL halfway; every agent, model call, turn and mail exactly once, no
// agent stuck, database connections bounded. The 1,000-agent version is bench/scale-out.ts.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../support/db.js";
import { runScaleOut } from "./scale-run.js";

const database = useTestDatabase();

describe("scale-out", () => {
  it("three workers and -p finish a 156-agent tree exactly once with a worker killed -9 halfway", async () => {
    const result = await runScaleOut({
      databaseUrl: database().url,
      shape: [5, 5, 5],
      workers: 3,
      killOneWorker: true,
      timeoutSeconds: 150,
      log: (line) => process.stderr.write(`scale-out: ${line}\n`),
    });
    process.stderr.write(
      `scale-out: ${result.agents} agents in ${(result.wallMs / 1000).toFixed(1)} s, ` +
        `${result.modelRequests} model requests (${result.requestsPerSecond.toFixed(1)}/s), ` +
        `${result.verdict.replays} replayed, ${result.verdict.retries} retried; ` +
        `peak ${result.maxConnections} connections (bound ${result.connectionBound}): ` +
        `${JSON.stringify(result.connectionsByApp)}\n`,
    );
    expect(result.verdict.problems).toEqual([]);
    expect(result.run.code, result.run.stderr).toBe(0);
    expect(JSON.parse(result.run.stdout)).toMatchObject({ text: "root done: 5 reports" });
    // The kill happened while the killed worker was running part of the tree.
    expect(result.victims.length).toBeGreaterThan(0);
    expect(result.maxConnections).toBeGreaterThan(0);
    expect(result.maxConnections).toBeLessThanOrEqual(result.connectionBound);
  }, 240_000);
});
