// Scale-out (issue 7 §7): a 1,011-agent tree (root forks 10, each 10, each 9; fake model) built
// by `warren -p` alone, then by `warren -p` + 2 `warren worker` processes, then by `-p` + 3
// workers with one killed by SIGKILL halfway; each run checked exactly-once (test/scale/).
// Figures: model requests per second and time to finish, 3 processes vs 1; peak connections.
import { runScaleOut, type ScaleRunResult } from "../test/scale/scale-run.js";
import type { TreeShape } from "../test/scale/tree-script.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { untilAborted } from "./stats.js";

/** BENCH_SCALE_SHAPE="5,5,5" runs a smaller tree (a quick look on a slow machine). */
function shape(): TreeShape {
  const given = process.env.BENCH_SCALE_SHAPE;
  if (!given) return [10, 10, 9];
  const parts = given.split(",").map(Number);
  if (parts.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error(`BENCH_SCALE_SHAPE must be comma-separated counts, not "${given}"`);
  }
  return parts;
}

export async function scaleOut(context: BenchContext): Promise<BenchRow[]> {
  const { url, signal, log } = context;
  const run = async (label: string, workers: number, killOneWorker: boolean) => {
    log(`scale-out: ${label}`);
    const result = await untilAborted(
      runScaleOut({
        databaseUrl: url,
        shape: shape(),
        workers,
        killOneWorker,
        timeoutSeconds: 1800,
        log: (line) => log(`scale-out: ${line}`),
      }),
      signal,
    );
    report(label, result, log);
    return result;
  };
  const one = await run("1 process (warren -p)", 0, false);
  const three = await run("3 processes (warren -p + 2 workers)", 2, false);
  const killed = await run("4 processes (warren -p + 3 workers), one killed -9 halfway", 3, true);
  const flagged = (result: ScaleRunResult, name: string) =>
    result.verdict.problems.length === 0
      ? name
      : `${name} (${result.verdict.problems.length} PROBLEMS)`;
  return [
    row(
      flagged(three, `scale-out model requests/s, ${three.agents} agents, 3 processes vs 1`),
      three.requestsPerSecond,
      "req/s",
      "1 process",
      one.requestsPerSecond,
    ),
    row(
      flagged(three, `scale-out time to finish, ${three.agents} agents, 3 processes vs 1`),
      three.wallMs / 1000,
      "s",
      "1 process",
      one.wallMs / 1000,
    ),
    row(
      flagged(killed, "scale-out time to finish, 4 processes, one killed -9 halfway"),
      killed.wallMs / 1000,
      "s",
      "3 processes, no kill",
      three.wallMs / 1000,
    ),
    row(
      flagged(killed, "scale-out peak DB connections, 4 processes"),
      killed.maxConnections,
      "connections",
      "bound (processes × (threads × 7 + 6))",
      killed.connectionBound,
    ),
  ];
}

function report(label: string, result: ScaleRunResult, log: (line: string) => void): void {
  log(
    `scale-out: ${label}: ${result.agents} agents in ${(result.wallMs / 1000).toFixed(1)} s, ` +
      `${result.modelRequests} model requests (${result.requestsPerSecond.toFixed(1)}/s), ` +
      `${result.verdict.replays} replayed and ${result.verdict.retries} retried after the kill ` +
      `(${result.victims.length} agents held by the killed worker); peak ` +
      `${result.maxConnections} connections (bound ${result.connectionBound}) ` +
      JSON.stringify(result.connectionsByApp),
  );
  if (result.run.code !== 0)
    log(`scale-out: warren -p exited ${result.run.code}: ${result.run.stderr.trim()}`);
  for (const problem of result.verdict.problems) log(`scale-out: PROBLEM ${problem}`);
}
