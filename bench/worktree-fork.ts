// A worktree fork (issue 30): `fork {isolation: "worktree"}` through the fork tool on a
// 100-file repository, beside a plain fork through the same tool and `git worktree add` alone,
// alternating in the same run, each round in a rotated order. Goal: a worktree fork costs at
// most 1.3× a plain fork plus `git worktree add` alone (the row's reference is their sum): the
// fork runs `git worktree add -b` itself, beside asking git which repository it is in.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { childCapabilities } from "../src/agents/capabilities.js";
import { DEFAULT_LIMITS } from "../src/agents/limits.js";
import { loadConfig } from "../src/config/config.js";
import { createTree } from "../src/agents/tree.js";
import { closeDb, createDb, type Db } from "../src/db/client.js";
import type { AgentToolContext } from "../src/tools/agent-context.js";
import { forkTool } from "../src/tools/fork.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { median, nowMs } from "./stats.js";

const FILES = 100;
const ROUNDS = 31;
const LIMITS = { ...DEFAULT_LIMITS, maxChildren: 1000, maxAgentsPerTree: 1000 };

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", ["-C", cwd, ...args], { stdio: "ignore" });
}

export async function worktreeFork(context: BenchContext): Promise<BenchRow[]> {
  const { url, signal, log } = context;
  const db = createDb(url, { max: 2, applicationName: "warren-bench-worktree-fork" });
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-bench-wt-")));
  try {
    git(dir, "init", "-q", "-b", "main");
    for (let i = 0; i < FILES; i++) {
      fs.mkdirSync(path.join(dir, `d${i % 10}`), { recursive: true });
      fs.writeFileSync(
        path.join(dir, `d${i % 10}`, `f${i}.ts`),
        `export const x${i} = ${i};\n`.repeat(40),
      );
    }
    git(dir, "add", "-A");
    git(dir, "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "-m", "init");
    const root = await createTree(db, { name: "bench", cwd: dir });
    let n = 0;
    const fork = async (isolated: boolean): Promise<number> => {
      n++;
      const ctx = benchContext(db, root, dir, `call_${n}`);
      const args = {
        name: `c${n}`,
        prompt: "p",
        context: "fresh",
        ...(isolated ? { isolation: "worktree" } : {}),
      };
      const started = nowMs();
      const outcome = await forkTool.run(args, ctx as never);
      const took = nowMs() - started;
      if (!outcome.ok) throw new Error(`fork failed: ${JSON.stringify(outcome.error)}`);
      return took;
    };
    const addAlone = (): number => {
      n++;
      const started = nowMs();
      git(
        dir,
        "worktree",
        "add",
        "-q",
        "-b",
        `bench/${n}`,
        path.join(dir, ".warren", "worktrees", `bench-${n}`),
        "HEAD",
      );
      return nowMs() - started;
    };
    await fork(true); // warm-up
    await fork(false);
    const isolated: number[] = [];
    const plain: number[] = [];
    const alone: number[] = [];
    const steps = [
      async () => isolated.push(await fork(true)),
      async () => plain.push(await fork(false)),
      async () => alone.push(addAlone()),
    ];
    for (let r = 0; r < ROUNDS && !signal.aborted; r++) {
      // Each round starts with the next of the three: none always runs first or after another.
      for (let k = 0; k < steps.length; k++) await steps[(r + k) % steps.length]!();
      log(
        `worktree-fork: round ${r + 1}: ${isolated.at(-1)!.toFixed(1)} ms isolated, ` +
          `${plain.at(-1)!.toFixed(1)} ms plain, ${alone.at(-1)!.toFixed(1)} ms git worktree add`,
      );
    }
    return [
      row(
        `worktree fork, ${FILES}-file repository (p50)`,
        median(isolated),
        "ms",
        "plain fork p50 + `git worktree add` alone p50",
        median(plain) + median(alone),
      ),
      row("`git worktree add` alone (p50)", median(alone), "ms", "plain fork (p50)", median(plain)),
    ];
  } finally {
    await closeDb(db);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const BENCH_CONFIG = loadConfig({ WARREN_CONFIG: "/nonexistent/warren.json" });

function benchContext(
  db: Db,
  agent: Awaited<ReturnType<typeof createTree>>,
  cwd: string,
  toolCallId: string,
): AgentToolContext {
  return {
    cwd,
    signal: new AbortController().signal,
    db,
    bus: undefined as never,
    agent,
    limits: LIMITS,
    profiles: {},
    fileAccess: "cwd",
    // As the runtime computes it, from a config without a file (agents/capabilities.ts).
    forkCapabilities: async (request) => childCapabilities(BENCH_CONFIG, agent, request),
    assistantEventId: 0,
    toolCallId,
    setWaiting: async () => {},
  };
}
