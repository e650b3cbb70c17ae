// Start-up: `warren ls` against a running database, and `warren --version` (no database), each
// spawned as a person would run it, beside `node -e 0` measured in the same run (the floor any
// Node program pays). Runs alternate so the machine's load drifts over all three alike.
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { nowMs, percentile } from "./stats.js";

const RUNS = 15;
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bin/warren");

function timed(args: string[], env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = nowMs();
    const child = spawn(process.execPath, args, { env, stdio: "ignore", signal });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(nowMs() - start);
      else reject(new Error(`${args.join(" ")} exited ${code}`));
    });
  });
}

export async function startup(context: BenchContext): Promise<BenchRow[]> {
  const { url, signal, log } = context;
  const env = { ...process.env, DATABASE_URL: url, NO_COLOR: "1" };
  const node: number[] = [];
  const ls: number[] = [];
  const version: number[] = [];
  log(`start-up: ${RUNS} runs each of node -e 0, warren --version, warren ls`);
  await timed([BIN, "ls"], env, signal); // the first run migrates the scratch database
  for (let i = 0; i < RUNS; i++) {
    node.push(await timed(["-e", "0"], env, signal));
    version.push(await timed([BIN, "--version"], env, signal));
    ls.push(await timed([BIN, "ls"], env, signal));
  }
  const floor = percentile(node, 50);
  return [
    row("warren ls, p50 (database running)", percentile(ls, 50), "ms", "node -e 0 p50", floor),
    row("warren --version, p50", percentile(version, 50), "ms", "node -e 0 p50", floor),
  ];
}
