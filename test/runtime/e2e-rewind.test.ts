// Undo end to end (issue 43, "Done when"): through the real runtime (in-process scheduler, fake
// model over HTTP, real Postgres, real bash and file tools) an agent writes, edits and deletes
// files over three turns; `warren rewind --to 2` (the built command line) puts the files back
// exactly as they were after turn 1 and its next request carries none of turns 2 and 3;
// `--files-only` and `--conversation-only` each do only their half.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { listTurns } from "../../src/agents/rewind.js";
import { sendMail } from "../../src/mail/send.js";
import { startScheduler, type Scheduler } from "../../src/runtime/scheduler.js";
import type { RecordedRequest } from "../support/fake-model.js";
import { useTestDatabase } from "../support/db.js";
import { useFakeRuntime } from "../support/fake-runtime.js";
import { g } from "../support/git.js";
import { until } from "../support/until.js";
import { runWarren, warrenEnv } from "../support/warren.js";
import { warrenHome } from "../../src/paths.js";

const database = useTestDatabase();
const runtime = useFakeRuntime(database);
let scheduler: Scheduler;
const dirs: string[] = [];

beforeAll(async () => {
  scheduler = await startScheduler(runtime.deps(runtime.config()), {
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
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-rewind-")));
  dirs.push(dir);
  g(dir, "init", "-q", "-b", "main");
  g(dir, "config", "user.email", "t@example.com");
  g(dir, "config", "user.name", "t");
  fs.writeFileSync(path.join(dir, "keep.txt"), "never touched\n");
  fs.writeFileSync(path.join(dir, ".gitignore"), "*.log\n");
  g(dir, "add", "-A");
  g(dir, "commit", "-q", "-m", "init");
  return dir;
}

/** Every file below `dir` (no .git, no .warren) with its content. */
function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (rel: string) => {
    for (const d of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${d.name}` : d.name;
      // A worktree's `.git` is a file; warren's worktrees live under `.warren/`.
      if (d.name === ".git" || d.name === ".warren") continue;
      if (d.isDirectory()) visit(r);
      else out[r] = fs.readFileSync(path.join(dir, r), "utf8");
    }
  };
  visit("");
  return out;
}

const lastUser = (req: RecordedRequest) =>
  String(req.messages.findLast((m) => m.role === "user")?.content ?? "");
const lastIsTool = (req: RecordedRequest) => req.messages.at(-1)?.role === "tool";
const allText = (req: RecordedRequest) => JSON.stringify(req.messages);

type Call = { name: string; arguments: Record<string, unknown> };

/** A turn of `name` started by a message holding `marker`: `calls`, then an answer. */
function turnScript(name: string, marker: string, calls: Call[]) {
  runtime.fake().script([
    {
      agent: name,
      match: (req) => lastUser(req).includes(marker) && !lastIsTool(req),
      reply: { toolCalls: calls },
    },
    {
      agent: name,
      match: (req) => lastUser(req).includes(marker) && lastIsTool(req),
      reply: { text: `done ${marker}` },
    },
  ]);
}

async function turnEnded(agentId: string, marker: string): Promise<void> {
  await until(
    `the turn "${marker}" to end`,
    async () => {
      const rows = await database().db.execute<{ state: string; done: boolean }>(sql`
        select a.state, exists (select 1 from events e where e.agent_id = a.id
                                  and e.kind = 'assistant' and e.content = ${`done ${marker}`}) as done
          from agents a where a.id = ${agentId}::uuid`);
      const row = rows.rows[0];
      return row?.done && row.state === "idle";
    },
    30_000,
  );
}

/**
 * Three turns of an agent in a fresh repository: turn 1 writes (write_file, bash), turn 2 edits
 * and deletes (edit_file, bash rm) and creates, turn 3 deletes a file of turn 1 and writes one
 * more. Returns the files after each turn.
 */
async function threeTurns(name: string) {
  const dir = repo();
  const { db } = database();
  turnScript(name, "turn-one", [
    { name: "write_file", arguments: { path: "a.txt", content: "alpha 1\n" } },
    {
      name: "bash",
      arguments: {
        command: "echo beta 1 > b.txt && mkdir -p d && echo x > d/x.txt && echo noise > run.log",
      },
    },
  ]);
  const agent = await createTree(db, { name, prompt: "turn-one", cwd: dir, approve: "all" });
  await turnEnded(agent.id, "turn-one");
  const after1 = files(dir);

  turnScript(name, "turn-two", [
    {
      name: "edit_file",
      arguments: { path: "a.txt", old_string: "alpha 1", new_string: "alpha 2" },
    },
    {
      name: "bash",
      arguments: { command: "rm b.txt && echo gamma 2 > c.txt && echo more >> run.log" },
    },
  ]);
  await sendMail(db, { treeId: agent.tree_id, fromId: null, toId: agent.id, body: "turn-two" });
  await turnEnded(agent.id, "turn-two");
  const after2 = files(dir);

  turnScript(name, "turn-three", [
    { name: "bash", arguments: { command: "rm -r d && echo delta 3 > e.txt" } },
    { name: "write_file", arguments: { path: "a.txt", content: "alpha 3\n" } },
  ]);
  await sendMail(db, { treeId: agent.tree_id, fromId: null, toId: agent.id, body: "turn-three" });
  await turnEnded(agent.id, "turn-three");
  return { agent, dir, after1, after2, after3: files(dir) };
}

// The command line shares warren's home with the worker here (the checkpoints' vaults are there),
// as a person's `warren rewind` shares it with their own warren.
const env = () =>
  warrenEnv({
    databaseUrl: database().url,
    modelUrl: runtime.fake().baseURL,
    extra: { WARREN_HOME: warrenHome() },
  });

const withoutLogs = (f: Record<string, string>) =>
  Object.fromEntries(Object.entries(f).filter(([k]) => !k.endsWith(".log")));

describe("warren rewind", () => {
  it("rewinds files and conversation to before turn 2, and the next request has neither turn", async () => {
    const { agent, dir, after1, after2, after3 } = await threeTurns("rw-both");
    expect(after1["b.txt"]).toBe("beta 1\n");
    expect(after2["b.txt"]).toBeUndefined();
    expect(after3["d/x.txt"]).toBeUndefined();
    const turns = await listTurns(database().db, agent.id);
    expect(turns.map((t) => [t.turn, t.rewound, !!t.checkpoint])).toEqual([
      [1, false, true],
      [2, false, true],
      [3, false, true],
    ]);
    // What turn 2 changed is on its checkpoint's row once turn 3's was taken.
    expect([...turns[1]!.checkpoint!.files!].sort()).toEqual(["a.txt", "b.txt", "c.txt"]);

    const list = await runWarren(
      ["rewind", "rw-both", "--list", "--json", "--tree", agent.id],
      env(),
    );
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { turn: number }[]).map((t) => t.turn)).toEqual([1, 2, 3]);

    const asked = await runWarren(["rewind", "rw-both", "--to", "2", "--tree", agent.id], env());
    expect(asked.code).toBe(1);
    expect(asked.stderr).toMatch(/run again with --yes/);
    expect(files(dir)).toEqual(after3);

    const done = await runWarren(
      ["rewind", "rw-both", "--to", "2", "--yes", "--tree", agent.id],
      env(),
    );
    expect(done.stderr).toBe("");
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/rewound rw-both .* to before turn 2/);
    // The files exactly as after turn 1 (the ignored log keeps what the turns wrote).
    expect(withoutLogs(files(dir))).toEqual(withoutLogs(after1));
    expect(files(dir)["run.log"]).toBe("noise\nmore\n");
    expect(g(dir, "status", "--porcelain", "--untracked-files=all")).toBe(
      ["?? a.txt", "?? b.txt", "?? d/x.txt"].join("\n"),
    );
    // Running it again (a crash half way) changes nothing more.
    const again = await runWarren(
      ["rewind", "rw-both", "--to", "2", "--yes", "--tree", agent.id],
      env(),
    );
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/0 written, 0 removed; conversation: 0 events rewound/);

    // The next turn's request carries turn 1 and none of turns 2 and 3.
    turnScript("rw-both", "turn-four", [{ name: "bash", arguments: { command: "true" } }]);
    const { db } = database();
    await sendMail(db, { treeId: agent.tree_id, fromId: null, toId: agent.id, body: "turn-four" });
    await turnEnded(agent.id, "turn-four");
    const four = runtime.fake().requests.filter((r) => lastUser(r).includes("turn-four"));
    expect(four.length).toBeGreaterThan(0);
    for (const req of four) {
      expect(allText(req)).toContain("turn-one");
      expect(allText(req)).toContain("done turn-one");
      for (const gone of ["turn-two", "turn-three", "gamma 2", "delta 3"]) {
        expect(allText(req)).not.toContain(gone);
      }
    }
    const listed = await listTurns(db, agent.id);
    expect(listed.map((t) => [t.turn, t.rewound])).toEqual([
      [1, false],
      [2, true],
      [3, true],
      [4, false],
    ]);
    // A rewound turn with live work after it is refused in one line.
    const stale = await runWarren(
      ["rewind", "rw-both", "--to", "3", "--yes", "--tree", agent.id],
      env(),
    );
    expect(stale.code).toBe(1);
    expect(stale.stderr.trim().split("\n")).toHaveLength(1);
    expect(stale.stderr).toMatch(/rewound already/);
  });

  it("--files-only restores the files and keeps the conversation; --conversation-only the reverse", async () => {
    const { agent, dir, after1, after3 } = await threeTurns("rw-half");
    const { db } = database();
    const files1 = await runWarren(
      ["rewind", "rw-half", "--to", "2", "--files-only", "--yes", "--tree", agent.id],
      env(),
    );
    expect(files1.code).toBe(0);
    expect(withoutLogs(files(dir))).toEqual(withoutLogs(after1));
    expect((await listTurns(db, agent.id)).some((t) => t.rewound)).toBe(false);

    // Back to turn 3's files by hand, then the conversation only: the files stay.
    for (const [f, text] of Object.entries(after3)) {
      fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      fs.writeFileSync(path.join(dir, f), text);
    }
    for (const f of Object.keys(after1)) if (!(f in after3)) fs.rmSync(path.join(dir, f));
    fs.rmSync(path.join(dir, "d"), { recursive: true, force: true });
    const conv = await runWarren(
      ["rewind", "rw-half", "--to", "2", "--conversation-only", "--yes", "--tree", agent.id],
      env(),
    );
    expect(conv.code).toBe(0);
    expect(files(dir)).toEqual(after3);
    expect((await listTurns(db, agent.id)).map((t) => t.rewound)).toEqual([false, true, true]);
  });

  it("a branch at turn 2 in a worktree has turn 1's files and turn 1's conversation", async () => {
    const { agent, dir, after1, after3 } = await threeTurns("rw-fork");
    turnScript("rw-fork-at2", "turn-five", [{ name: "bash", arguments: { command: "true" } }]);
    const made = await runWarren(
      ["fork", "rw-fork", "--at", "2", "--worktree", "--tree", agent.id, "turn-five"],
      env(),
    );
    expect(made.stderr).toBe("");
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/forked rw-fork-at2 \w+ from rw-fork .* before turn 2 in /);
    const { db } = database();
    const rows = await db.execute<{ id: string; worktree: { path: string } }>(
      sql`select id, worktree from agents where name = 'rw-fork-at2' and tree_id = ${agent.tree_id}`,
    );
    const branch = rows.rows[0]!;
    expect(withoutLogs(files(branch.worktree.path))).toEqual(withoutLogs(after1));
    // The agent's own files are left as they were.
    expect(withoutLogs(files(dir))).toEqual(withoutLogs(after3));
    await turnEnded(branch.id, "turn-five");
    const five = runtime.fake().requests.filter((r) => lastUser(r).includes("turn-five"));
    expect(five.length).toBeGreaterThan(0);
    for (const req of five) {
      expect(allText(req)).toContain("done turn-one");
      for (const gone of ["turn-two", "turn-three"]) expect(allText(req)).not.toContain(gone);
    }
  });

  it("a running agent is refused without --yes, and interrupted first with it", async () => {
    const dir = repo();
    const { db } = database();
    const name = "rw-run";
    turnScript(name, "turn-one", [
      { name: "write_file", arguments: { path: "a.txt", content: "alpha 1\n" } },
    ]);
    const agent = await createTree(db, { name, prompt: "turn-one", cwd: dir, approve: "all" });
    await turnEnded(agent.id, "turn-one");
    const after1 = files(dir);
    runtime.fake().script([
      {
        agent: name,
        match: (req) => lastUser(req).includes("turn-two") && !lastIsTool(req),
        reply: { toolCalls: [{ name: "bash", arguments: { command: "echo two > two.txt" } }] },
      },
      // The turn's next request never gets an answer: the agent stays running.
      { agent: name, match: (req) => lastUser(req).includes("turn-two"), reply: { hang: true } },
    ]);
    await sendMail(db, { treeId: agent.tree_id, fromId: null, toId: agent.id, body: "turn-two" });
    await until("turn two's file", async () => fs.existsSync(path.join(dir, "two.txt")), 30_000);

    const refused = await runWarren(["rewind", name, "--to", "2", "--tree", agent.id], env());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is running: --yes interrupts it first/);
    expect(fs.existsSync(path.join(dir, "two.txt"))).toBe(true);

    const done = await runWarren(["rewind", name, "--to", "2", "--yes", "--tree", agent.id], env());
    expect(done.stderr).toBe("");
    expect(done.code).toBe(0);
    expect(files(dir)).toEqual(after1);
    const turns = await listTurns(db, agent.id);
    expect(turns.map((t) => [t.turn, t.rewound])).toEqual([
      [1, false],
      [2, true],
    ]);
  });
});
