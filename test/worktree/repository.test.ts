// Which repository warren's git runs in (src/agents/repository.ts), on real git repositories in
// temp directories: git's own answers in each layout; a tree's recorded repository and nothing
// else; and the runs after the check pinned to what was checked, so a worktree's `.git` file
// rewritten meanwhile is not followed.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { commonDirOf, openRepository, RepositoryRefused } from "../../src/agents/repository.js";
import { planWorktree } from "../../src/agents/worktree.js";
import { g } from "../support/git.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
afterEach(() => {
  delete process.env.GIT_DIR;
});

function tempDir(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-repo-")));
  dirs.push(dir);
  return dir;
}

/** A repository in a fresh temp dir (`<tmp>/r`), with one commit unless `unborn`. */
function repo(unborn = false): string {
  const dir = path.join(tempDir(), "r");
  fs.mkdirSync(dir);
  g(dir, "init", "-q", "-b", "main");
  if (unborn) return dir;
  fs.writeFileSync(path.join(dir, "a.txt"), "a\n");
  g(dir, "add", "-A");
  g(dir, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "init");
  return dir;
}

/** What git answers in `cwd`. */
function revParse(cwd: string) {
  const [top, common, head] = g(
    cwd,
    "rev-parse",
    "--path-format=absolute",
    "--show-toplevel",
    "--git-common-dir",
    "HEAD",
  ).split("\n");
  return { top, common, head };
}

/** The error `work` rejects with. */
async function refusal(work: Promise<unknown>): Promise<RepositoryRefused> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RepositoryRefused);
  return err as RepositoryRefused;
}

describe("commonDirOf: what a tree records when it starts", () => {
  it("the common git directory, real, from a subdirectory, a symlink or a linked worktree", async () => {
    const dir = repo();
    const common = path.join(dir, ".git");
    const sub = path.join(dir, "x", "y");
    fs.mkdirSync(sub, { recursive: true });
    const link = path.join(tempDir(), "link");
    fs.symlinkSync(dir, link);
    const wt = path.join(path.dirname(dir), "wt");
    g(dir, "worktree", "add", "-q", "-b", "side", wt);
    for (const cwd of [dir, sub, link, wt]) expect(await commonDirOf(cwd)).toBe(common);
  });

  it("null outside any repository, and for a directory that is gone", async () => {
    expect(await commonDirOf(tempDir())).toBeNull();
    expect(await commonDirOf(path.join(tempDir(), "gone"))).toBeNull();
  });
});

describe("openRepository gives git's answers in the recorded repository", () => {
  it("a plain repository, at its top and from a subdirectory", async () => {
    const dir = repo();
    const sub = path.join(dir, "x");
    fs.mkdirSync(sub);
    for (const cwd of [dir, sub]) {
      const git = await openRepository(cwd, path.join(dir, ".git"));
      expect({ top: git.top, common: git.common, head: git.head }).toEqual(revParse(cwd));
      expect(git.gitDir).toBe(path.join(dir, ".git"));
      expect(git.index).toBe(path.join(dir, ".git", "index"));
    }
  });

  it("a linked worktree: its own git directory and index, the main repository's common one", async () => {
    const dir = repo();
    const wt = path.join(path.dirname(dir), "wt");
    g(dir, "worktree", "add", "-q", "-b", "side", wt);
    const git = await openRepository(wt, path.join(dir, ".git"));
    expect({ top: git.top, common: git.common, head: git.head }).toEqual(revParse(wt));
    expect(git.gitDir).toBe(path.join(dir, ".git", "worktrees", "wt"));
    expect(git.index).toBe(path.join(dir, ".git", "worktrees", "wt", "index"));
    expect(await git.ok(["branch", "--show-current"])).toBe("side");
  });

  it("a `.git` file with a relative gitdir (as a submodule's), and GIT_DIR set", async () => {
    const dir = repo();
    const elsewhere = path.join(path.dirname(dir), "elsewhere");
    fs.mkdirSync(elsewhere);
    fs.renameSync(path.join(dir, ".git"), path.join(elsewhere, "r.git"));
    fs.writeFileSync(path.join(dir, ".git"), "gitdir: ../elsewhere/r.git\n");
    const git = await openRepository(dir, path.join(elsewhere, "r.git"));
    expect({ top: git.top, common: git.common, head: git.head }).toEqual(revParse(dir));
    const plain = repo();
    process.env.GIT_DIR = path.join(plain, ".git");
    const viaEnv = await openRepository(tempDir(), path.join(plain, ".git"));
    expect(viaEnv.common).toBe(path.join(plain, ".git"));
  });

  it("an unborn branch: no HEAD commit, and the fork is refused", async () => {
    const dir = repo(true);
    const git = await openRepository(dir, path.join(dir, ".git"));
    expect(git.head).toBeUndefined();
    const plan = planWorktree(dir, "a", "00000000-0000-4000-8000-000000000000", git.common);
    await expect(plan).rejects.toMatchObject({ code: "INVALID_ARGS" });
    await expect(plan).rejects.toThrow(`${dir} has no commit yet`);
  });
});

describe("openRepository refuses any repository but the recorded one", () => {
  it("another repository, in one line naming both", async () => {
    const dir = repo();
    const other = repo();
    const err = await refusal(openRepository(dir, path.join(other, ".git")));
    expect(err.found).toBe(path.join(dir, ".git"));
    expect(err.message).toBe(
      `warren's git does not run in ${dir}: its .git leads to ${path.join(dir, ".git")}, and the tree's repository is ${path.join(other, ".git")}`,
    );
  });

  it("a `.git` file planted to lead to another repository", async () => {
    const dir = repo();
    const other = repo();
    const recorded = path.join(dir, ".git");
    fs.renameSync(recorded, path.join(dir, ".git-real"));
    fs.writeFileSync(path.join(dir, ".git"), `gitdir: ${path.join(other, ".git")}\n`);
    const err = await refusal(openRepository(dir, recorded));
    expect(err.found).toBe(path.join(other, ".git"));
  });

  it("any repository when the tree recorded none, and none when it recorded one", async () => {
    const dir = repo();
    const none = await refusal(openRepository(dir, null));
    expect(none.message).toMatch(/the tree recorded no git repository when it started$/);
    const outside = tempDir();
    const gone = await refusal(openRepository(outside, path.join(dir, ".git")));
    expect(gone.found).toBeNull();
    expect(gone.message).toMatch(new RegExp(`^${outside} is not inside a git working tree`));
  });

  it("through a symlink to the repository, it is the same one (real paths)", async () => {
    const dir = repo();
    const link = path.join(tempDir(), "link");
    fs.symlinkSync(dir, link);
    const git = await openRepository(link, path.join(dir, ".git"));
    expect(git.common).toBe(path.join(dir, ".git"));
  });
});

describe("the runs after the check are pinned to the checked repository", () => {
  it("a worktree's `.git` file rewritten after the check is not followed: git writes where it was checked", async () => {
    const dir = repo();
    const other = repo();
    const wt = path.join(path.dirname(dir), "wt");
    g(dir, "worktree", "add", "-q", "-b", "side", wt);
    const git = await openRepository(wt, path.join(dir, ".git"));
    // What the agent working there could do right after warren's check.
    fs.writeFileSync(path.join(wt, ".git"), `gitdir: ${path.join(other, ".git")}\n`);
    expect(g(wt, "rev-parse", "--path-format=absolute", "--git-common-dir")).toBe(
      path.join(other, ".git"),
    );
    const otherRefs = g(other, "for-each-ref", "--format=%(refname)");
    await git.ok(["branch", "pinned"]);
    expect(g(dir, "branch", "--list", "pinned")).toContain("pinned");
    expect(g(other, "for-each-ref", "--format=%(refname)")).toBe(otherRefs);
  });
});
