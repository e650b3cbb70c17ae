// "Checkpoints of an idle agent cost nothing" (issue 43), through the real runtime (in-process
// scheduler, fake model over HTTP, real Postgres, real git): an agent that takes no turn takes no
// checkpoint, and neither does a turn offered no tool that changes files, nor a turn offered them
// that calls none (a fan-in's child that only answers): no row, no vault, no ref in the
// repository. A turn that writes a file, beside them, takes one, before the write (the control).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { warrenHome } from "../../src/paths.js";
import { startScheduler, type Scheduler } from "../../src/runtime/scheduler.js";
import { useTestDatabase } from "../support/db.js";
import { useFakeRuntime } from "../support/fake-runtime.js";
import { execFileSync } from "node:child_process";
import { committedRepo, g } from "../support/git.js";
import { until } from "../support/until.js";

const database = useTestDatabase();
const runtime = useFakeRuntime(database);
let scheduler: Scheduler;
const dirs: string[] = [];

beforeAll(async () => {
  const config = runtime.config({ profiles: { reader: { tools: ["read_file", "grep", "glob"] } } });
  scheduler = await startScheduler(runtime.deps(config), {
    concurrency: 2,
    leaseSeconds: 10,
    pollMs: 200,
  });
});
afterAll(async () => {
  await scheduler.stop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function repo(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-idle-")));
  dirs.push(dir);
  return committedRepo(dir, { "a.txt": "a\n" });
}

async function checkpointsOf(agentId: string): Promise<number> {
  const rows = await database().db.execute<{ n: string }>(
    sql`select count(*) as n from checkpoints where agent_id = ${agentId}::uuid`,
  );
  return Number(rows.rows[0]!.n);
}

/** git against the vault itself (a bare repository borrowing the repository's objects). */
const gitIn = (env: Record<string, string>, ...args: string[]): string =>
  execFileSync("git", args, { env: { ...process.env, ...env }, encoding: "utf8" }).trim();

const vaultOf = (agentId: string) => path.join(warrenHome(), "checkpoints", "git", agentId);

async function answered(agentId: string, text: string): Promise<void> {
  await until(
    `the answer "${text}"`,
    async () => {
      const rows = await database().db.execute<{ done: boolean }>(sql`
        select exists (select 1 from events where agent_id = ${agentId}::uuid
                         and kind = 'assistant' and content = ${text})
           and (select state from agents where id = ${agentId}::uuid) = 'idle' as done`);
      return rows.rows[0]?.done;
    },
    30_000,
  );
}

describe("checkpoints cost an idle agent nothing", () => {
  it("takes none for an agent without a turn, a turn offered only reading tools, or one that calls none", async () => {
    const { db } = database();
    const dir = repo();
    runtime.fake().script([
      { agent: "reader", match: () => true, reply: { text: "read it" } },
      {
        agent: "writer",
        match: (req) => req.messages.at(-1)?.role === "user",
        reply: {
          toolCalls: [{ name: "write_file", arguments: { path: "b.txt", content: "b\n" } }],
        },
      },
      {
        agent: "writer",
        match: (req) => req.messages.at(-1)?.role === "tool",
        reply: { text: "wrote" },
      },
      { agent: "talker", match: () => true, reply: { text: "wrote nothing" } },
    ]);
    const idle = await createTree(db, { name: "idle", cwd: dir });
    const reader = await createTree(db, {
      name: "reader",
      cwd: dir,
      profile: "reader",
      prompt: "look",
    });
    const writer = await createTree(db, { name: "writer", cwd: dir, prompt: "go" });
    const talker = await createTree(db, { name: "talker", cwd: dir, prompt: "say" });
    await answered(reader.id, "read it");
    await answered(writer.id, "wrote");
    await answered(talker.id, "wrote nothing");
    // A few of the scheduler's polls pass with the idle agent in the tree.
    await new Promise((r) => setTimeout(r, 1_000));

    // The control: a turn that wrote a file took its checkpoint, of the files before the write.
    expect(await checkpointsOf(writer.id)).toBe(1);
    expect(fs.existsSync(vaultOf(writer.id))).toBe(true);
    expect(fs.readFileSync(path.join(dir, "b.txt"), "utf8")).toBe("b\n");
    const [row] = (
      await db.execute<{ tree: string }>(
        sql`select tree_sha as tree from checkpoints where agent_id = ${writer.id}::uuid`,
      )
    ).rows;
    const vault = { GIT_DIR: vaultOf(writer.id) };
    expect(gitIn(vault, "ls-tree", "--name-only", row!.tree)).toBe("a.txt");
    for (const agent of [idle, reader, talker]) {
      expect(await checkpointsOf(agent.id)).toBe(0);
      expect(fs.existsSync(vaultOf(agent.id))).toBe(false);
    }
    expect(g(dir, "for-each-ref", "refs/warren/")).toBe("");
  });
});
