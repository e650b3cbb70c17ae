// Checkpoints and rewind (issue 43). A checkpoint of a 5,000-file repository with 10 files
// changed since the last one, as a turn takes it (checkpointBeforeTurn: the repository opened and
// checked, `git add -A` to a temporary index, `git commit` in the agent's vault, `git diff-tree`,
// its row), beside `git stash create` alone on the same repository and state, alternating, each
// round in a rotated order. Goal: ≤ 1.5× `git stash create`. Then the turn list
// `warren rewind --list` reads, of an agent with 1,000 turns, beside a plain read of the same
// agent's events. Goal: ≤ 100 ms.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { appendEvent } from "../src/agents/events.js";
import { checkpointsOf } from "../src/agents/checkpoints.js";
import { loadConfig } from "../src/config/config.js";
import { warrenHome } from "../src/paths.js";
import { checkpointBeforeTurn } from "../src/runtime/checkpoint-turn.js";
import { listTurns } from "../src/agents/rewind.js";
import { createTree } from "../src/agents/tree.js";
import { closeDb, createDb } from "../src/db/client.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { median, nowMs } from "./stats.js";

const FILES = 5000;
const CHANGED = 10;
const ROUNDS = 21;
const TURNS = 1000;

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-C", cwd, ...args], { encoding: "utf8" });
}

export async function checkpointBench(context: BenchContext): Promise<BenchRow[]> {
  const { url, signal, log } = context;
  const db = createDb(url, { max: 2, applicationName: "warren-bench-checkpoint" });
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-bench-ckpt-")));
  let vault: string | undefined;
  try {
    git(dir, "init", "-q", "-b", "main");
    for (let i = 0; i < FILES; i++) {
      fs.mkdirSync(path.join(dir, `d${i % 50}`), { recursive: true });
      fs.writeFileSync(path.join(dir, `d${i % 50}`, `f${i}.ts`), `export const x${i} = ${i};\n`);
    }
    git(dir, "add", "-A");
    git(dir, "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "-m", "init");
    const root = await createTree(db, { name: "bench", cwd: dir });
    vault = path.join(warrenHome(), "checkpoints", "git", root.id);
    const config = loadConfig({ HOME: os.tmpdir(), WARREN_MODEL: "m" });
    const deps: Parameters<typeof checkpointBeforeTurn>[0] = {
      db,
      config,
      onWarning: (w) => {
        throw new Error(`the checkpoint failed: ${JSON.stringify(w)}`);
      },
    };
    let round = 0;
    /** 10 files changed since the last checkpoint (or stash), as a turn would leave them. */
    const change = () => {
      round++;
      for (let k = 0; k < CHANGED; k++) {
        const i = (round * 37 + k * 101) % FILES;
        fs.writeFileSync(path.join(dir, `d${i % 50}`, `f${i}.ts`), `// round ${round}\n`);
      }
    };
    const checkpoint = async (): Promise<number> => {
      change();
      const start = await appendEvent(db, root.id, "user", `turn ${round}`);
      const began = nowMs();
      await checkpointBeforeTurn(deps, root, start.id);
      const took = nowMs() - began;
      // Each round's checkpoint is a new commit of its own: the bench measures real work.
      const rows = await checkpointsOf(db, root.id);
      if (
        rows.at(-1)?.start_event !== start.id ||
        rows.at(-1)?.commit_sha === rows.at(-2)?.commit_sha
      ) {
        throw new Error("the checkpoint took no new commit");
      }
      return took;
    };
    const stash = (): number => {
      change();
      const began = nowMs();
      git(dir, "stash", "create");
      return nowMs() - began;
    };
    await checkpoint(); // warm-up
    stash();
    const taken: number[] = [];
    const stashed: number[] = [];
    const steps = [async () => taken.push(await checkpoint()), async () => stashed.push(stash())];
    for (let r = 0; r < ROUNDS && !signal.aborted; r++) {
      for (let k = 0; k < steps.length; k++) await steps[(r + k) % steps.length]!();
      log(
        `checkpoint: round ${r + 1}: ${taken.at(-1)!.toFixed(1)} ms checkpoint, ` +
          `${stashed.at(-1)!.toFixed(1)} ms git stash create`,
      );
    }

    // An agent with 1,000 turns: a message, an answer with usage, each turn.
    const many = await createTree(db, { name: "many-turns" });
    await db.execute(sql`
      insert into events (agent_id, kind, content, data)
      select ${many.id}::uuid, k.kind, k.kind || ' ' || n,
             case when k.kind = 'assistant'
                  then '{"usage": {"inputTokens": 1200, "outputTokens": 80}}'::jsonb end
        from generate_series(1, ${TURNS}) n
       cross join (values (1, 'mail_in'), (2, 'assistant')) k(o, kind)
       order by n, k.o`);
    const listed: number[] = [];
    const plain: number[] = [];
    for (let r = 0; r < ROUNDS && !signal.aborted; r++) {
      let began = nowMs();
      const turns = await listTurns(db, many.id);
      listed.push(nowMs() - began);
      if (turns.length !== TURNS) throw new Error(`listed ${turns.length} turns, not ${TURNS}`);
      began = nowMs();
      await db.execute(sql`select * from events where agent_id = ${many.id}::uuid order by id`);
      plain.push(nowMs() - began);
    }
    log(`checkpoint: rewind --list of ${TURNS} turns: ${median(listed).toFixed(1)} ms p50`);
    return [
      row(
        `checkpoint, ${FILES}-file repository, ${CHANGED} files changed (p50)`,
        median(taken),
        "ms",
        "`git stash create` alone (p50)",
        median(stashed),
      ),
      row(
        `rewind --list, ${TURNS} turns (p50)`,
        median(listed),
        "ms",
        "a plain read of the same agent's events (p50)",
        median(plain),
      ),
    ];
  } finally {
    await closeDb(db);
    fs.rmSync(dir, { recursive: true, force: true });
    if (vault) fs.rmSync(vault, { recursive: true, force: true });
  }
}
