// warren runs git outside the sandbox (a worktree fork, changes, merge, diff, discard) in
// repositories an agent can write: the `.git` in its working directory, or one it made with
// `git init`. A hostile model plants a program there, in every place git would run one from,
// and waits for warren's git to run it with warren's environment: hooks, core.fsmonitor, filter,
// merge and diff drivers (through an included file, and under a name with `=` in it). None runs;
// each planted program is shown live first, run by a plain git in the same repository. Nor does
// warren's git run in any repository but the one the tree recorded when it started, whatever a
// `.git` planted later (in the root's own directory too) says.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { getAgent } from "../../src/agents/refs.js";
import { createTree, killAgent } from "../../src/agents/tree.js";
import { eventKey } from "../../src/agents/event-keys.js";
import { changesOf, childIdFor, planWorktree } from "../../src/agents/worktree.js";
import { diffAgent, discardAgent, mergeAgent, sweepReaped } from "../../src/agents/worktree-ops.js";
import { forkTool } from "../../src/tools/fork.js";
import { useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { toolContext } from "../support/tool-context.js";
import { g, gitShim } from "../support/git.js";
import { startFakeModel } from "../support/fake-model.js";
import { runWarren, warrenEnv } from "../support/warren.js";
import { after, isFirst, isTask, lastToolResults, requestsOf } from "../runtime/e2e-support.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

interface Planted {
  dir: string;
  /** Every run of the planted program appends a line here. */
  marker: string;
  /** The planted program: logs its run, passes its input (file or stdin) through, as a filter. */
  evil: string;
}

/** A repository with shared.txt and f1.txt committed, and a program ready to plant. */
function plantable(): Planted {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-planted-")));
  dirs.push(base);
  const dir = path.join(base, "repo");
  fs.mkdirSync(dir);
  const marker = path.join(base, "ran");
  const evil = path.join(base, "evil.sh");
  fs.writeFileSync(
    evil,
    `#!/bin/sh\necho "$0 $*" >> '${marker}'\nif [ -f "$1" ]; then cat "$1"; else cat; fi\n`,
    { mode: 0o755 },
  );
  g(dir, "init", "-q", "-b", "main");
  g(dir, "config", "user.email", "t@example.com");
  g(dir, "config", "user.name", "t");
  fs.writeFileSync(path.join(dir, "shared.txt"), "one\ntwo\nthree\n");
  fs.writeFileSync(path.join(dir, "f1.txt"), "file 1\n");
  g(dir, "add", "-A");
  g(dir, "commit", "-q", "-m", "init");
  return { dir, marker, evil };
}

/** git with every planted program turned off: the test's own steps must not run one either. */
function inert(cwd: string, ...args: string[]): string {
  const off: [string, string][] = [
    ["core.hooksPath", "/dev/null"],
    ["core.fsmonitor", "false"],
    ["filter.evil.clean", "cat"],
    ["filter.evil.smudge", "cat"],
    ["filter.odd=name.clean", "cat"],
  ];
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_CONFIG_COUNT: String(off.length) };
  off.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return execFileSync("git", ["-C", cwd, ...args], { encoding: "utf8", env }).trim();
}

function ran(p: Planted): string[] {
  return fs.existsSync(p.marker) ? fs.readFileSync(p.marker, "utf8").trim().split("\n") : [];
}

/**
 * Everything warren's git does for an isolated child, in `p.dir` as the root's working
 * directory: fork one child and change a file in its worktree, measure, diff and merge it; fork
 * another and discard it.
 */
async function everyGitRun(p: Planted): Promise<void> {
  const { db } = database();
  const root = await createTree(db, { name: "root", cwd: p.dir });
  const fork = async (name: string) => {
    const ctx = await toolContext(db, bus(), root.id, { cwd: p.dir, toolCallId: `call_${name}` });
    const outcome = await forkTool.run(
      { name, prompt: "work", isolation: "worktree" },
      ctx as never,
    );
    if (!outcome.ok) throw new Error(JSON.stringify(outcome.error));
    return outcome.value as { agent_id: string; worktree: string };
  };
  const idle = async (id: string) => {
    await db.execute(sql`update agents set state = 'idle' where id = ${id}::uuid`);
    return (await getAgent(db, id))!;
  };
  const a = await fork("a");
  // What the checkout wrote is what was committed (no smudge filter ran over it).
  expect(fs.readFileSync(path.join(a.worktree, "shared.txt"), "utf8")).toBe("one\ntwo\nthree\n");
  fs.writeFileSync(path.join(a.worktree, "shared.txt"), "one\ntwo\nthree by a\n");
  fs.writeFileSync(path.join(a.worktree, "new.txt"), "new\n");
  const agentA = await idle(a.agent_id);
  expect(await changesOf(agentA.worktree!)).toMatchObject({ files: 2 });
  expect(await diffAgent(agentA)).toContain("three by a");
  // The parent moves on meanwhile: the merge is a real three-way one.
  fs.writeFileSync(path.join(p.dir, "shared.txt"), "one by root\ntwo\nthree\n");
  inert(p.dir, "commit", "-q", "-am", "root's edit");
  // A merge driver turned off makes its files conflict: refused cleanly, or merged.
  await mergeAgent(db, agentA).catch((err: Error) => expect(err.message).toMatch(/conflicts/));
  const b = await fork("b");
  fs.writeFileSync(path.join(b.worktree, "f1.txt"), "doomed\n");
  await db.execute(sql`update agents set state = 'dead' where id = ${b.agent_id}::uuid`);
  await discardAgent(db, (await getAgent(db, b.agent_id))!);
}

describe("a program an agent plants in its repository is not run by warren's git", () => {
  it("hooks: none of the hooks git runs on checkout, commit, merge or ref updates", async () => {
    const p = plantable();
    const hooks = path.join(p.dir, ".git", "hooks");
    const names = [
      "post-checkout",
      "pre-commit",
      "prepare-commit-msg",
      "commit-msg",
      "post-commit",
      "pre-merge-commit",
      "post-merge",
      "reference-transaction",
      "post-index-change",
    ];
    for (const name of names) fs.copyFileSync(p.evil, path.join(hooks, name));
    fs.chmodSync(hooks, 0o755);
    for (const name of names) fs.chmodSync(path.join(hooks, name), 0o755);
    await everyGitRun(p);
    expect(ran(p)).toEqual([]);
    // Live: a plain git in the same repository runs them.
    g(p.dir, "commit", "-q", "--allow-empty", "-m", "plain");
    expect(ran(p).length).toBeGreaterThan(0);
  });

  it("core.fsmonitor in the repository's config", async () => {
    const p = plantable();
    g(p.dir, "config", "core.fsmonitor", p.evil);
    await everyGitRun(p);
    expect(ran(p)).toEqual([]);
    g(p.dir, "status", "--porcelain");
    expect(ran(p).length).toBeGreaterThan(0);
  });

  it("filter, merge and diff drivers, from an included file and under a name with `=`", async () => {
    const p = plantable();
    const extra = path.join(p.dir, ".git", "extra.cfg");
    fs.writeFileSync(
      extra,
      [
        '[filter "evil"]',
        `\tclean = ${p.evil}`,
        `\tsmudge = ${p.evil}`,
        "\trequired = true",
        '[filter "odd=name"]',
        `\tclean = ${p.evil}`,
        '[merge "evil"]',
        `\tdriver = ${p.evil} %O %A %B`,
        '[diff "evil"]',
        `\ttextconv = ${p.evil}`,
        "",
      ].join("\n"),
    );
    g(p.dir, "config", "include.path", extra);
    fs.writeFileSync(
      path.join(p.dir, ".gitattributes"),
      "*.txt filter=evil merge=evil diff=evil\nnew.txt filter=odd=name\n",
    );
    inert(p.dir, "add", "-A");
    inert(p.dir, "commit", "-q", "-m", "attributes");
    expect(ran(p)).toEqual([]);
    await everyGitRun(p);
    expect(ran(p)).toEqual([]);
    // Live: a plain `git add` runs the clean filter, the odd-named one included.
    fs.writeFileSync(path.join(p.dir, "new.txt"), "x\n");
    g(p.dir, "add", "new.txt");
    expect(ran(p).length).toBeGreaterThan(0);
  });
});

describe("a worktree child's .git, rewritten to point elsewhere", () => {
  it("gives its own isolated fork no worktree of the other repository, which is left untouched", async () => {
    const { db } = database();
    const p = plantable();
    const other = plantable();
    const root = await createTree(db, { name: "root", cwd: p.dir });
    const ctx = await toolContext(db, bus(), root.id, { cwd: p.dir, toolCallId: "call_c" });
    const made = await forkTool.run(
      { name: "c", prompt: "work", isolation: "worktree" },
      ctx as never,
    );
    if (!made.ok) throw new Error(JSON.stringify(made.error));
    const child = made.value as { agent_id: string; worktree: string };
    const childCtx = await toolContext(db, bus(), child.agent_id, {
      cwd: child.worktree,
      toolCallId: "call_gc0",
    });
    // Untouched, it gives its own child a worktree of the same repository.
    const fine = await forkTool.run(
      { name: "gc0", prompt: "work", isolation: "worktree" },
      childCtx as never,
    );
    expect(fine.ok).toBe(true);
    expect(g(p.dir, "branch", "--list", "warren/gc0-*")).toMatch(/warren\/gc0-/);
    // What the child's own bash can do: its worktree, .git file included, is its to write.
    fs.writeFileSync(
      path.join(child.worktree, ".git"),
      `gitdir: ${path.join(other.dir, ".git")}\n`,
    );
    const otherGit = () => ({
      refs: g(other.dir, "for-each-ref", "--format=%(refname)"),
      worktrees: g(other.dir, "worktree", "list", "--porcelain"),
      exclude: fs.readFileSync(path.join(other.dir, ".git", "info", "exclude"), "utf8"),
    });
    const before = otherGit();
    const outcome = await forkTool.run({ name: "gc", prompt: "work", isolation: "worktree" }, {
      ...childCtx,
      toolCallId: "call_gc",
    } as never);
    expect(outcome.ok).toBe(false);
    expect(JSON.stringify(outcome)).toMatch(
      /INVALID_ARGS.*warren's git does not run in .*: its \.git leads to .*, and the tree's repository is/,
    );
    expect(otherGit()).toEqual(before);
    expect(fs.readdirSync(path.join(child.worktree, ".warren", "worktrees")).sort()).toEqual([
      ".gitignore",
      expect.stringMatching(/^gc0-/),
    ]);
  });
});

/** What warren could have written in a repository: refs, worktrees, exclude lines, files. */
function footprint(dir: string) {
  return {
    refs: g(dir, "for-each-ref", "--format=%(refname) %(objectname)"),
    worktrees: g(dir, "worktree", "list", "--porcelain"),
    exclude: fs.readFileSync(path.join(dir, ".git", "info", "exclude"), "utf8"),
    status: g(dir, "status", "--porcelain", "--ignored"),
  };
}

describe("a `.git` planted in the root's working directory, leading to another repository", () => {
  it("end to end: the isolated fork, merge, diff and discard are refused; the other repository is untouched", async () => {
    const { url } = database();
    const p = plantable();
    const other = plantable();
    const otherGit = path.join(other.dir, ".git");
    const recorded = path.join(p.dir, ".git");
    const fake = await startFakeModel();
    try {
      // The root's own bash (unsandboxed here: this is about warren's git, not the sandbox)
      // replaces `.git` once its first isolated child has worked.
      const plant = `mv .git .git-real && printf 'gitdir: %s\\n' '${otherGit}' > .git && echo planted`;
      fake.script([
        {
          agent: "root",
          match: isFirst,
          reply: {
            toolCalls: [
              { name: "fork", arguments: { name: "a", prompt: "edit", isolation: "worktree" } },
            ],
          },
        },
        {
          agent: "root",
          match: after("fork"),
          reply: { toolCalls: [{ name: "wait", arguments: { from_agents: ["a"], timeout: 60 } }] },
        },
        {
          agent: "a",
          match: isTask,
          reply: {
            toolCalls: [{ name: "write_file", arguments: { path: "shared.txt", content: "a\n" } }],
          },
        },
        { agent: "a", match: after("write_file"), reply: { text: "edited" } },
        {
          agent: "root",
          match: after("wait"),
          reply: { toolCalls: [{ name: "bash", arguments: { command: plant } }] },
        },
        {
          agent: "root",
          match: after("bash"),
          reply: {
            toolCalls: [
              { name: "fork", arguments: { name: "b", prompt: "edit", isolation: "worktree" } },
            ],
          },
        },
        { agent: "root", match: after("fork"), reply: { text: "done" } },
      ]);
      const env = warrenEnv({ databaseUrl: url, modelUrl: fake.baseURL });
      const configDir = path.join(env.XDG_CONFIG_HOME!, "warren");
      fs.mkdirSync(configDir, { recursive: true });
      fs.writeFileSync(path.join(configDir, "config.json"), JSON.stringify({ sandbox: "off" }));
      dirs.push(env.HOME!);
      const before = footprint(other.dir);
      const run = await runWarren(["-p", "go", "--json", "--timeout", "60"], env, p.dir);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      fake.assertAllUsed();
      const treeId = (JSON.parse(run.stdout) as { tree_id: string }).tree_id;
      const roots = requestsOf(fake, "root");
      expect(lastToolResults(roots.at(-2)!)[0]!.value).toMatchObject({
        exit_code: 0,
        output: "planted\n",
      });
      const refused = lastToolResults(roots.at(-1)!)[0]!.value;
      expect(refused).toEqual({
        error: {
          code: "INVALID_ARGS",
          message: `warren's git does not run in ${p.dir}: its .git leads to ${otherGit}, and the tree's repository is ${recorded}`,
        },
      });
      expect(footprint(other.dir)).toEqual(before);

      // `warren merge|diff|discard` of the child made before: refused in one line each. The merge
      // goes into the root's directory, whose .git leads elsewhere; the child's worktree is no
      // longer one of the recorded repository (its entry moved with `.git`).
      const refusals = {
        merge: `warren: warren's git does not run in ${p.dir}: its .git leads to ${otherGit}, and the tree's repository is ${recorded}`,
        diff: /^warren: \S+\/\.warren\/worktrees\/a-\w+ is not inside a git working tree \(the tree's repository is /,
        discard:
          /^warren: \S+\/\.warren\/worktrees\/a-\w+ is not inside a git working tree \(the tree's repository is /,
      };
      for (const [command, line] of Object.entries(refusals)) {
        const yes = command === "discard" ? ["--yes"] : [];
        const said = await runWarren([command, "a", ...yes, "--tree", treeId], env, p.dir);
        expect(said.code).toBe(1);
        expect(said.stderr.trim().split("\n")).toHaveLength(1);
        if (typeof line === "string") expect(said.stderr.trim()).toBe(line);
        else expect(said.stderr).toMatch(line);
      }
      expect(footprint(other.dir)).toEqual(before);
      expect(fs.existsSync(path.join(other.dir, ".warren"))).toBe(false);
      // The child's work is where it was made, on its branch of the recorded repository.
      fs.rmSync(path.join(p.dir, ".git"));
      fs.renameSync(path.join(p.dir, ".git-real"), recorded);
      expect(g(p.dir, "branch", "--format=%(refname:short)")).toMatch(/^warren\/a-/m);
    } finally {
      await fake.close();
    }
  });

  it("reaping keeps a worktree whose repository it cannot check, and writes nothing elsewhere", async () => {
    const { db } = database();
    const p = plantable();
    const other = plantable();
    const root = await createTree(db, { name: "root", cwd: p.dir });
    const ctx = await toolContext(db, bus(), root.id, { cwd: p.dir, toolCallId: "call_r" });
    const made = await forkTool.run(
      { name: "r", prompt: "work", isolation: "worktree" },
      ctx as never,
    );
    if (!made.ok) throw new Error(JSON.stringify(made.error));
    const child = made.value as { agent_id: string; worktree: string };
    // Nothing in it: reaping would remove it, with `git worktree remove` and `git branch -D`.
    fs.renameSync(path.join(p.dir, ".git"), path.join(p.dir, ".git-real"));
    fs.writeFileSync(path.join(p.dir, ".git"), `gitdir: ${path.join(other.dir, ".git")}\n`);
    const before = footprint(other.dir);
    await killAgent(db, { targetId: child.agent_id, byAgentId: null });
    expect(await sweepReaped(db, [child.agent_id])).toEqual([child.worktree]);
    expect(fs.existsSync(child.worktree)).toBe(true);
    expect(footprint(other.dir)).toEqual(before);
  });

  it("a tree started outside any repository refuses the one its root makes later", async () => {
    const { db } = database();
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-norepo-")));
    dirs.push(dir);
    const root = await createTree(db, { name: "root", cwd: dir });
    expect(root.repository).toBeNull();
    // What the root's bash can do: `git init` and a commit, then an isolated fork.
    g(dir, "init", "-q", "-b", "main");
    fs.writeFileSync(path.join(dir, "f.txt"), "f\n");
    g(dir, "add", "-A");
    g(dir, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "init");
    const before = footprint(dir);
    const ctx = await toolContext(db, bus(), root.id, { cwd: dir, toolCallId: "call_n" });
    const outcome = await forkTool.run(
      { name: "n", prompt: "work", isolation: "worktree" },
      ctx as never,
    );
    expect(outcome).toEqual({
      ok: false,
      error: {
        code: "INVALID_ARGS",
        message: `warren's git does not run in ${dir}: its .git leads to ${path.join(dir, ".git")}, and the tree recorded no git repository when it started`,
      },
    });
    expect(footprint(dir)).toEqual(before);
    expect(fs.existsSync(path.join(dir, ".warren"))).toBe(false);
  });

  it("a tree records its repository's common directory, real, from a subdirectory or a worktree", async () => {
    const { db } = database();
    const p = plantable();
    const sub = path.join(p.dir, "sub");
    fs.mkdirSync(sub);
    const link = path.join(path.dirname(p.dir), "link");
    fs.symlinkSync(p.dir, link);
    for (const cwd of [p.dir, sub, link]) {
      expect((await createTree(db, { cwd })).repository).toBe(path.join(p.dir, ".git"));
    }
  });
});

describe("a symlink planted where worktrees are made", () => {
  it("makes the fork fail; nothing is made or removed where it points", async () => {
    const { db } = database();
    const p = plantable();
    const elsewhere = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-elsewhere-")));
    dirs.push(elsewhere);
    const root = await createTree(db, { name: "root", cwd: p.dir });
    // The agent knows its own id and chooses its call's id: it can tell where the worktree
    // would go, and put a directory of someone else's there, for a "leftover" removal.
    const plan = await planWorktree(
      p.dir,
      "s",
      childIdFor(root.id, eventKey.toolResult(0, "call_s")),
      root.repository,
    );
    const victim = path.join(elsewhere, path.basename(plan.path));
    fs.mkdirSync(victim);
    fs.writeFileSync(path.join(victim, "f"), "mine\n");
    fs.mkdirSync(path.join(p.dir, ".warren"));
    fs.symlinkSync(elsewhere, path.join(p.dir, ".warren", "worktrees"));
    const ctx = await toolContext(db, bus(), root.id, { cwd: p.dir, toolCallId: "call_s" });
    const outcome = await forkTool.run(
      { name: "s", prompt: "work", isolation: "worktree" },
      ctx as never,
    );
    expect(JSON.stringify(outcome)).toMatch(/INVALID_ARGS.*reached through a symlink/);
    expect(fs.readdirSync(elsewhere)).toEqual([path.basename(plan.path)]);
    expect(fs.readdirSync(victim)).toEqual(["f"]);
    expect(g(p.dir, "branch", "--format=%(refname:short)")).toBe("main");
  });
});

describe("warren's git gets bash's environment", () => {
  it("no secret of warren's reaches it; git's own variables do", async () => {
    const p = plantable();
    // A `git` first on PATH that writes down the environment of warren's runs (known by their
    // first setting) and hands over to the real one.
    const seen = path.join(os.tmpdir(), `warren-git-env-${process.pid}-${Date.now()}`);
    const shim = gitShim(`[ "$4" = core.hooksPath=/dev/null ] && env >> '${seen}'`);
    dirs.push(shim, seen);
    const saved = { ...process.env };
    process.env.PATH = `${shim}${path.delimiter}${process.env.PATH}`;
    process.env.OPENAI_API_KEY = "sk-sentinel-key";
    process.env.DATABASE_URL = "postgres://sentinel@db/warren";
    process.env.WARREN_SENTINEL = "sentinel";
    process.env.GIT_AUTHOR_NAME = "Git Author";
    try {
      await everyGitRun(p);
    } finally {
      for (const key of [
        "PATH",
        "OPENAI_API_KEY",
        "DATABASE_URL",
        "WARREN_SENTINEL",
        "GIT_AUTHOR_NAME",
      ]) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    }
    const env = fs.readFileSync(seen, "utf8");
    expect(env).toContain("GIT_AUTHOR_NAME=Git Author");
    expect(env).not.toMatch(/sentinel/);
  });
});
