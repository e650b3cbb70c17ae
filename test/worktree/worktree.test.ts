// A git worktree per agent (issue 30, SPEC §3 "Worktrees"), on real git repositories in temp
// directories: forks through the fork tool and the runtime with the fake model, merges, conflicts,
// discards, a dirty parent tree, outside a repository, and crashes while a worktree is made.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { eventKey } from "../../src/agents/event-keys.js";
import { loadAgentFiles } from "../../src/config/agent-files.js";
import { getAgent } from "../../src/agents/refs.js";
import { createTree, killAgent, reapDead } from "../../src/agents/tree.js";
import { childIdFor, planWorktree } from "../../src/agents/worktree.js";
import { discardAgent, mergeAgent } from "../../src/agents/worktree-ops.js";
import { forkTool } from "../../src/tools/fork.js";
import { waitTool } from "../../src/tools/wait.js";
import { worktreeTestHooks } from "../../src/tools/fork-worktree.js";
import { runAgent } from "../../src/runtime/turn.js";
import { useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { toolContext } from "../support/tool-context.js";
import { fakeTurnDeps } from "../support/turn-deps.js";
import { g, gitShim } from "../support/git.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
let fake: FakeModel;
const dirs: string[] = [];

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(async () => {
  await fake.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
afterEach(() => {
  delete worktreeTestHooks.afterAdd;
});

/** A repository with `files` committed files (shared.txt among them). */
function repo(files = 3): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-wt-")));
  dirs.push(dir);
  g(dir, "init", "-q", "-b", "main");
  g(dir, "config", "user.email", "t@example.com");
  g(dir, "config", "user.name", "t");
  fs.writeFileSync(path.join(dir, "shared.txt"), "one\ntwo\nthree\n");
  for (let i = 1; i < files; i++) fs.writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n`);
  g(dir, "add", "-A");
  g(dir, "commit", "-q", "-m", "init");
  return dir;
}

function branches(dir: string): string[] {
  return g(dir, "branch", "--format=%(refname:short)").split("\n").filter(Boolean).sort();
}

function worktreeDirs(dir: string): string[] {
  const root = path.join(dir, ".warren", "worktrees");
  // The worktrees: not the `.gitignore` warren keeps beside them.
  return fs.existsSync(root) ? fs.readdirSync(root).filter((d) => d !== ".gitignore") : [];
}

interface Forked {
  agent_id: string;
  name: string;
  worktree: string;
  branch: string;
}

async function forkIsolated(rootId: string, cwd: string, name: string, callId?: string) {
  const { db } = database();
  const ctx = await toolContext(db, bus(), rootId, {
    cwd,
    ...(callId ? { toolCallId: callId } : {}),
  });
  return forkTool.run({ name, prompt: `work as ${name}`, isolation: "worktree" }, ctx as never);
}

/** The child's turn over: idle, as it would be after sending its result. */
async function settle(id: string) {
  await database().db.execute(sql`update agents set state = 'idle' where id = ${id}::uuid`);
  return (await getAgent(database().db, id))!;
}

async function forked(rootId: string, cwd: string, name: string): Promise<Forked> {
  const outcome = await forkIsolated(rootId, cwd, name);
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.error));
  return outcome.value as Forked;
}

describe("fork with isolation worktree", () => {
  it("gives the child a worktree on warren/<name>-<id8> from the parent's HEAD, excluded from git", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "root", cwd: dir });
    const child = await forked(root.id, dir, "alpha");
    const id8 = child.agent_id.slice(0, 8);
    expect(child.branch).toBe(`warren/alpha-${id8}`);
    expect(child.worktree).toBe(path.join(dir, ".warren", "worktrees", `alpha-${id8}`));
    expect(g(child.worktree, "rev-parse", "HEAD")).toBe(g(dir, "rev-parse", "HEAD"));
    expect(g(child.worktree, "branch", "--show-current")).toBe(child.branch);
    const row = (await getAgent(db, child.agent_id))!;
    expect(row.cwd).toBe(child.worktree);
    expect(row.worktree).toMatchObject({ path: child.worktree, branch: child.branch, repo: dir });
    // Ignored by a `.gitignore` of warren's beside the worktrees, not by a line written inside
    // `.git` (which warren writes only through git): the parent's tree stays clean.
    const exclude = () => fs.readFileSync(path.join(dir, ".git", "info", "exclude"), "utf8");
    const excluded = exclude();
    expect(g(dir, "status", "--porcelain", "--untracked-files=all")).toBe("");
    await forked(root.id, dir, "beta");
    expect(g(dir, "status", "--porcelain", "--untracked-files=all")).toBe("");
    expect(g(dir, "check-ignore", "-v", path.join(child.worktree, "new.txt"))).toMatch(
      /^\.warren\/worktrees\/\.gitignore:\d+:\*\t/,
    );
    expect(exclude()).toBe(excluded);
  });

  it("is made by `git worktree add -b`, every run hardened and pinned to the checked repository", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "root", cwd: dir });
    // A `git` first on PATH that logs each run of warren's and hands it to the real one.
    const log = path.join(os.tmpdir(), `warren-git-log-${process.pid}-${Date.now()}`);
    const shim = gitShim(`printf '%s\\n' "$*" >> '${log}'`);
    dirs.push(shim, log);
    const before = process.env.PATH;
    process.env.PATH = `${shim}${path.delimiter}${before}`;
    let child: Forked;
    try {
      child = await forked(root.id, dir, "counted");
    } finally {
      process.env.PATH = before;
    }
    const runs = fs.readFileSync(log, "utf8").trim().split("\n");
    // Hardened as every git run of warren's (test/security/git-planted.test.ts).
    for (const r of runs) expect(r).toMatch(/^-C \S+ -c core\.hooksPath=\/dev\/null /);
    // One asks git which repository this is; the others are given it.
    const [asked, ...given] = [
      ...runs.filter((r) => !r.includes("--git-dir=")),
      ...runs.filter((r) => r.includes("--git-dir=")),
    ];
    expect(asked).toMatch(/ rev-parse --path-format=absolute --git-common-dir /);
    for (const r of given) expect(r).toContain(` --git-dir=${path.join(dir, ".git")} `);
    expect(given.length).toBe(runs.length - 1);
    const base = g(dir, "rev-parse", "HEAD");
    expect(runs.filter((r) => / worktree add /.test(r))).toEqual([
      expect.stringMatching(
        new RegExp(` worktree add -q -b ${child.branch} ${child.worktree} ${base}$`),
      ),
    ]);
    // Git made it as its own: listed on its branch, with the branch's reflog.
    expect(g(dir, "worktree", "list", "--porcelain")).toContain(
      `worktree ${child.worktree}\nHEAD ${base}\nbranch refs/heads/${child.branch}`,
    );
    expect(g(dir, "reflog", "show", "--format=%gs", child.branch)).toMatch(/branch: Created from/);
  });

  it("the same call again answers with the first's result and makes no second worktree", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "root", cwd: dir });
    const first = await forkIsolated(root.id, dir, "once", "call_same");
    const again = await forkIsolated(root.id, dir, "once", "call_same");
    expect(again).toEqual(first);
    expect(worktreeDirs(dir)).toHaveLength(1);
    expect(branches(dir)).toHaveLength(2);
  });

  it("outside a git repository: INVALID_ARGS, and no child", async () => {
    const { db } = database();
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-nogit-")));
    dirs.push(dir);
    const root = await createTree(db, { name: "root", cwd: dir });
    const outcome = await forkIsolated(root.id, dir, "lost");
    expect(outcome.ok).toBe(false);
    const error = (outcome as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("INVALID_ARGS");
    expect(error.message).toMatch(/not inside a git working tree/);
    expect(error.message).not.toMatch(/\n/);
    const rows = await db.execute(sql`select 1 from agents where parent_id = ${root.id}::uuid`);
    expect(rows.rows).toHaveLength(0);
  });

  it("a profile's isolation makes the child isolated", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "root", cwd: dir });
    const ctx = await toolContext(db, bus(), root.id, {
      cwd: dir,
      profiles: { worker: { isolation: "worktree" } },
    });
    const outcome = await forkTool.run({ name: "w", prompt: "p", profile: "worker" }, ctx as never);
    expect(outcome.ok).toBe(true);
    expect((outcome as { value: Forked }).value.branch).toMatch(/^warren\/w-/);
  });
});

describe("an agent file's isolation", () => {
  it("a child forked with the file's profile works in a worktree of its own", async () => {
    const { db } = database();
    const dir = repo();
    fs.mkdirSync(path.join(dir, ".claude", "agents"), { recursive: true });
    fs.writeFileSync(
      path.join(dir, ".claude", "agents", "builder.md"),
      "---\nname: builder\ndescription: builds in its own tree\ntools: Read, Write\nisolation: worktree\n---\nYou build.\n",
    );
    const files = loadAgentFiles(dir, { HOME: dir, XDG_CONFIG_HOME: path.join(dir, "xdg") });
    expect(files.warnings).toEqual([]);
    const root = await createTree(db, { name: "root", cwd: dir });
    const ctx = await toolContext(db, bus(), root.id, { cwd: dir, profiles: files.profiles });
    const outcome = await forkTool.run(
      { name: "b", prompt: "p", profile: "builder" },
      ctx as never,
    );
    expect(outcome.ok).toBe(true);
    const made = (outcome as { value: Forked }).value;
    expect(made.branch).toMatch(/^warren\/b-/);
    const child = await getAgent(db, made.agent_id);
    expect(child?.cwd).toBe(made.worktree);
    expect(child?.worktree?.branch).toBe(made.branch);
  });
});

describe("a crash while a worktree is made", () => {
  it("a failure right after git worktree add leaves no worktree and no branch", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "root", cwd: dir });
    worktreeTestHooks.afterAdd = () => {
      throw new Error("injected crash after worktree add");
    };
    const outcome = await forkIsolated(root.id, dir, "crashy");
    expect(outcome.ok).toBe(false);
    expect(worktreeDirs(dir)).toEqual([]);
    expect(branches(dir)).toEqual(["main"]);
    expect(g(dir, "worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(1);
  });

  it("a branch lock another git holds: refused with git's reason in one line; nothing made", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "root", cwd: dir });
    const id = childIdFor(root.id, eventKey.toolResult(0, "call_lock"));
    const plan = await planWorktree(dir, "locked", id, root.repository);
    const lock = path.join(dir, ".git", "refs", "heads", `${plan.branch}.lock`);
    fs.mkdirSync(path.dirname(lock), { recursive: true });
    fs.writeFileSync(lock, "held");
    const outcome = await forkIsolated(root.id, dir, "locked", "call_lock");
    expect(outcome.ok).toBe(false);
    const error = (outcome as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("INVALID_ARGS");
    expect(error.message).toMatch(/git worktree add failed: .*cannot lock ref/);
    expect(error.message).not.toMatch(/\n/);
    expect(fs.readFileSync(lock, "utf8")).toBe("held");
    expect(worktreeDirs(dir)).toEqual([]);
    expect(branches(dir)).toEqual(["main"]);
  });

  it("where git cannot make the branch (a packed `warren` branch is in the way), it says why", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "root", cwd: dir });
    g(dir, "branch", "warren");
    g(dir, "pack-refs", "--all");
    const outcome = await forkIsolated(root.id, dir, "blocked");
    expect(outcome.ok).toBe(false);
    expect(JSON.stringify(outcome)).toMatch(/INVALID_ARGS.*git worktree add failed.*warren/);
    expect(worktreeDirs(dir)).toEqual([]);
    expect(branches(dir)).toEqual(["main", "warren"]);
  });

  it("leftovers of a killed attempt (locked entry, half checkout, branch) are cleared on retry", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "root", cwd: dir });
    // What a `git worktree add` killed mid-way leaves at the call's deterministic path and
    // branch: the branch, the entry still locked "initializing", a half-written directory.
    // The tool's key for call_crash of assistant event 0 (toolContext's).
    const id = childIdFor(root.id, eventKey.toolResult(0, "call_crash"));
    const plan = await planWorktree(dir, "crash", id, root.repository);
    g(dir, "worktree", "add", "-q", "-b", plan.branch, plan.path, "HEAD");
    g(dir, "worktree", "lock", "--reason", "initializing", plan.path);
    fs.rmSync(path.join(plan.path, "f1.txt"));
    fs.writeFileSync(path.join(plan.path, "stray.txt"), "half\n");

    const outcome = await forkIsolated(root.id, dir, "crash", "call_crash");
    expect(outcome.ok).toBe(true);
    const made = (outcome as { value: Forked }).value;
    // One worktree, one branch beside main, a clean checkout of HEAD.
    expect(worktreeDirs(dir)).toHaveLength(1);
    expect(branches(dir)).toEqual(["main", made.branch].sort());
    expect(g(made.worktree, "status", "--porcelain")).toBe("");
    expect(made.worktree).toBe(plan.path);
    expect(made.agent_id).toBe(id);
    expect(fs.existsSync(path.join(made.worktree, "stray.txt"))).toBe(false);
  });

  it("a fork the database refuses (a twin name) removes the worktree it made", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "root", cwd: dir });
    await forked(root.id, dir, "twin");
    const outcome = await forkIsolated(root.id, dir, "twin");
    expect(outcome.ok).toBe(false);
    expect(worktreeDirs(dir)).toHaveLength(1);
    expect(branches(dir)).toHaveLength(2);
  });
});

describe("merge, conflict, discard", () => {
  it("two isolated children edit one file apart; merge; the second conflicts and aborts cleanly", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "root", cwd: dir });
    const a = await forked(root.id, dir, "a");
    const b = await forked(root.id, dir, "b");
    fs.writeFileSync(path.join(a.worktree, "shared.txt"), "one\nTWO by a\nthree\n");
    fs.writeFileSync(path.join(a.worktree, "new-a.txt"), "x\ny\n");
    fs.writeFileSync(path.join(b.worktree, "shared.txt"), "one\ntwo by b\nthree\n");
    // Apart: each sees its own, the parent's tree neither.
    expect(fs.readFileSync(path.join(a.worktree, "shared.txt"), "utf8")).toContain("TWO by a");
    expect(fs.readFileSync(path.join(b.worktree, "shared.txt"), "utf8")).toContain("two by b");
    expect(fs.readFileSync(path.join(dir, "shared.txt"), "utf8")).toBe("one\ntwo\nthree\n");

    const merged = await mergeAgent(db, await settle(a.agent_id));
    expect(merged).toMatch(/^merged warren\/a-.* \(2 files \+3 -1\)$/);
    expect(fs.readFileSync(path.join(dir, "shared.txt"), "utf8")).toContain("TWO by a");
    expect(fs.readFileSync(path.join(dir, "new-a.txt"), "utf8")).toBe("x\ny\n");
    expect(g(dir, "status", "--porcelain")).toBe("");

    const head = g(dir, "rev-parse", "HEAD");
    const conflict = mergeAgent(db, await settle(b.agent_id));
    await expect(conflict).rejects.toThrow(/conflicts in shared\.txt; aborted/);
    // Aborted: the parent's tree and HEAD as they were; b's work on its branch.
    expect(g(dir, "rev-parse", "HEAD")).toBe(head);
    expect(g(dir, "status", "--porcelain")).toBe("");
    expect(fs.existsSync(path.join(dir, ".git", "MERGE_HEAD"))).toBe(false);
    expect(g(dir, "show", `${b.branch}:shared.txt`)).toContain("two by b");
  });

  it("a dirty parent tree is refused before anything changes", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "root", cwd: dir });
    const a = await forked(root.id, dir, "a");
    fs.writeFileSync(path.join(a.worktree, "f1.txt"), "changed\n");
    fs.writeFileSync(path.join(dir, "f2.txt"), "parent's edit\n");
    const head = g(dir, "rev-parse", "HEAD");
    await expect(mergeAgent(db, await settle(a.agent_id))).rejects.toThrow(
      /has uncommitted changes \(1 path\); commit or stash them/,
    );
    expect(g(dir, "rev-parse", "HEAD")).toBe(head);
    expect(fs.readFileSync(path.join(dir, "f2.txt"), "utf8")).toBe("parent's edit\n");
    // The child's work was not even committed on its branch.
    expect(g(a.worktree, "status", "--porcelain")).toBe("M f1.txt");
  });

  it("discard removes the worktree and its branch", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "root", cwd: dir });
    const a = await forked(root.id, dir, "a");
    fs.writeFileSync(path.join(a.worktree, "f1.txt"), "doomed\n");
    await killAgent(db, { targetId: a.agent_id, byAgentId: null });
    const said = await discardAgent(db, (await getAgent(db, a.agent_id))!);
    expect(said).toMatch(/^removed .* \(1 file \+1 -1 discarded\)$/);
    expect(fs.existsSync(a.worktree)).toBe(false);
    expect(branches(dir)).toEqual(["main"]);
    expect((await getAgent(db, a.agent_id))!.worktree?.removed).toBe(true);
  });

  it("a child killed mid-edit keeps its work through reaping; merging it then cleans up", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "root", cwd: dir });
    const busy = await forked(root.id, dir, "busy");
    const idle = await forked(root.id, dir, "idle");
    fs.writeFileSync(path.join(busy.worktree, "f1.txt"), "half an edit");
    await killAgent(db, { targetId: busy.agent_id, byAgentId: null });
    await killAgent(db, { targetId: idle.agent_id, byAgentId: null });
    await reapDead(db, root.id);
    // Nothing in it: removed. Unmerged work: kept.
    expect(fs.existsSync(idle.worktree)).toBe(false);
    expect(branches(dir)).toEqual(["main", busy.branch].sort());
    expect(fs.readFileSync(path.join(busy.worktree, "f1.txt"), "utf8")).toBe("half an edit");
    await mergeAgent(db, (await getAgent(db, busy.agent_id))!);
    expect(fs.readFileSync(path.join(dir, "f1.txt"), "utf8")).toBe("half an edit");
    expect(fs.existsSync(busy.worktree)).toBe(false);
    expect(branches(dir)).toEqual(["main"]);
  });
});

describe("changes", () => {
  it("a wait result for an isolated child carries its changes, untracked files included", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "root", cwd: dir });
    const a = await forked(root.id, dir, "a");
    fs.writeFileSync(path.join(a.worktree, "shared.txt"), "one\nthree\n");
    fs.writeFileSync(path.join(a.worktree, "brand-new.txt"), "1\n2\n3\n");
    g(a.worktree, "add", "shared.txt");
    g(a.worktree, "commit", "-q", "-m", "a commit of its own");
    fs.writeFileSync(path.join(a.worktree, "f1.txt"), "file 1\nmore\n");
    await settle(a.agent_id);
    const ctx = await toolContext(db, bus(), root.id, { cwd: dir });
    const outcome = await waitTool.run({ timeout: 0, from_agents: ["a"] }, ctx as never);
    expect(outcome.ok).toBe(true);
    const [entry] = (outcome as { value: { results: { changes?: unknown }[] } }).value.results;
    expect(entry!.changes).toEqual({ files: 3, added: 4, removed: 1 });
    // Counting left the child's own index as it was: brand-new.txt is still untracked.
    expect(g(a.worktree, "status", "--porcelain")).toBe("M f1.txt\n?? brand-new.txt");
  });
});

describe("through the runtime", () => {
  it("an isolated child's file tools and bash work in its worktree and reach nothing outside it", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "boss", cwd: dir, prompt: "delegate" });
    fake.script([
      {
        agent: "boss",
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "w1", prompt: "edit", isolation: "worktree" } },
            { name: "fork", arguments: { name: "w2", prompt: "edit", isolation: "worktree" } },
          ],
        },
      },
      { agent: "boss", reply: { text: "forked" } },
      ...["w1", "w2"].map((name) => ({
        agent: name,
        reply: {
          toolCalls: [
            { name: "write_file", arguments: { path: "shared.txt", content: `by ${name}\n` } },
            { name: "write_file", arguments: { path: "../../../escape.txt", content: "no" } },
            { name: "bash", arguments: { command: "pwd; git branch --show-current" } },
          ],
        },
      })),
      { agent: "w1", reply: { text: "done" } },
      { agent: "w2", reply: { text: "done" } },
    ]);
    const deps = fakeTurnDeps(db, bus(), fake.baseURL);
    await runAgent(deps, root.id, new AbortController().signal);
    const children = await db.execute<{ id: string; name: string; cwd: string }>(
      sql`select id, name, cwd from agents where parent_id = ${root.id}::uuid order by name`,
    );
    expect(children.rows.map((r) => r.name)).toEqual(["w1", "w2"]);
    await Promise.all(children.rows.map((c) => runAgent(deps, c.id, new AbortController().signal)));
    fake.assertAllUsed();
    for (const c of children.rows) {
      expect(fs.readFileSync(path.join(c.cwd, "shared.txt"), "utf8")).toBe(`by ${c.name}\n`);
      const results = await db.execute<{ content: string }>(
        sql`select content from events where agent_id = ${c.id}::uuid and kind = 'tool_result' order by id`,
      );
      // Concurrent calls: their results land in any order.
      const texts = results.rows.map((r) => r.content);
      const escape = texts.find((t) => t.includes("escape.txt"));
      const bash = texts.find((t) => t.includes("exit_code"));
      expect(escape).toMatch(/NOT_ALLOWED/);
      expect(bash).toContain(c.cwd);
      expect(bash).toContain(`warren/${c.name}-${c.id.slice(0, 8)}`);
    }
    // Each child's edits are measured after its calls and kept on its row for the panel.
    const measured = await db.execute<{ changes: unknown }>(
      sql`select worktree->'changes' as changes from agents where parent_id = ${root.id}::uuid`,
    );
    expect(measured.rows.map((r) => r.changes)).toEqual([
      { files: 1, added: 1, removed: 3 },
      { files: 1, added: 1, removed: 3 },
    ]);
    expect(fs.existsSync(path.join(dir, "escape.txt"))).toBe(false);
    expect(fs.existsSync(path.join(dir, ".warren", "escape.txt"))).toBe(false);
    expect(fs.readFileSync(path.join(dir, "shared.txt"), "utf8")).toBe("one\ntwo\nthree\n");
  });
});
