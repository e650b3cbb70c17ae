// Reading a repository from its files (src/agents/repository.ts), on real git repositories in temp
// directories: in each known layout the answers are git's own (`git rev-parse`), and the unusual
// layouts answer "ask git". A branch written as a file is one git reads as its own, and where a
// name is taken in any form git would refuse, nothing is written and git is left to say why.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createBranch, createWorktreeEntry, readRepository } from "../../src/agents/repository.js";
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
  const [repo, common, base] = g(
    cwd,
    "rev-parse",
    "--path-format=absolute",
    "--show-toplevel",
    "--git-common-dir",
    "HEAD",
  ).split("\n");
  return { repo, common, base };
}

describe("readRepository gives git's answers", () => {
  it("a plain repository, at its top and from a subdirectory", () => {
    const dir = repo();
    const sub = path.join(dir, "x", "y");
    fs.mkdirSync(sub, { recursive: true });
    expect(readRepository(dir)).toEqual(revParse(dir));
    expect(readRepository(sub)).toEqual(revParse(sub));
    expect(readRepository(sub)?.repo).toBe(dir);
  });

  it("through a symlink to the repository: real paths", () => {
    const dir = repo();
    const link = path.join(tempDir(), "link");
    fs.symlinkSync(dir, link);
    expect(readRepository(link)).toEqual(revParse(link));
    expect(readRepository(link)?.repo).toBe(dir);
  });

  it("HEAD on a packed ref, and on a symbolic ref", () => {
    const dir = repo();
    g(dir, "pack-refs", "--all");
    expect(fs.existsSync(path.join(dir, ".git", "refs", "heads", "main"))).toBe(false);
    expect(readRepository(dir)).toEqual(revParse(dir));
    g(dir, "symbolic-ref", "refs/heads/alias", "refs/heads/main");
    g(dir, "symbolic-ref", "HEAD", "refs/heads/alias");
    expect(readRepository(dir)).toEqual(revParse(dir));
  });

  it("a detached HEAD", () => {
    const dir = repo();
    g(dir, "checkout", "-q", "--detach");
    fs.writeFileSync(path.join(dir, "a.txt"), "b\n");
    g(dir, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qam", "detached");
    const read = readRepository(dir);
    expect(read).toEqual(revParse(dir));
    expect(read?.base).not.toBe(g(dir, "rev-parse", "main"));
  });

  it("a linked worktree (git worktree add), on a loose and on a packed branch", () => {
    const dir = repo();
    const wt = path.join(path.dirname(dir), "wt");
    g(dir, "worktree", "add", "-q", "-b", "side", wt);
    fs.mkdirSync(path.join(wt, "sub"));
    for (const cwd of [wt, path.join(wt, "sub")]) {
      expect(readRepository(cwd)).toEqual(revParse(cwd));
      expect(readRepository(cwd)?.common).toBe(path.join(dir, ".git"));
    }
    g(dir, "pack-refs", "--all");
    expect(readRepository(wt)).toEqual(revParse(wt));
  });

  it("a `.git` file with a relative gitdir and no commondir (as a submodule's)", () => {
    const dir = repo();
    const elsewhere = path.join(path.dirname(dir), "elsewhere");
    fs.mkdirSync(elsewhere);
    fs.renameSync(path.join(dir, ".git"), path.join(elsewhere, "r.git"));
    fs.writeFileSync(path.join(dir, ".git"), "gitdir: ../elsewhere/r.git\n");
    const read = readRepository(dir);
    expect(read).toEqual(revParse(dir));
    expect(read?.common).toBe(path.join(elsewhere, "r.git"));
  });

  it("an unborn branch: no commit, and the fork is refused as before", async () => {
    const dir = repo(true);
    const [top, common] = g(
      dir,
      "rev-parse",
      "--path-format=absolute",
      "--show-toplevel",
      "--git-common-dir",
    ).split("\n");
    expect(readRepository(dir)).toEqual({ repo: top, common, base: undefined });
    const plan = planWorktree(dir, "a", "00000000-0000-4000-8000-000000000000");
    await expect(plan).rejects.toMatchObject({ code: "INVALID_ARGS" });
    await expect(plan).rejects.toThrow(`${dir} has no commit yet`);
  });
});

describe("unusual layouts ask git", () => {
  it("GIT_DIR set: git answers, and the plan is still right", async () => {
    const dir = repo();
    process.env.GIT_DIR = path.join(dir, ".git");
    expect(readRepository(dir)).toBeUndefined();
    const plan = await planWorktree(dir, "a", "00000000-0000-4000-8000-000000000000");
    expect(plan).toMatchObject(revParse(dir));
  });

  it("core.worktree, core.bare, refStorage, an odd HEAD, a bare repository", () => {
    const settings = [
      ["core.worktree", "/elsewhere"],
      ["core.bare", "true"],
      ["extensions.refStorage", "files"],
    ];
    for (const [key, value] of settings) {
      const dir = repo();
      g(dir, "config", key!, value!);
      expect(readRepository(dir)).toBeUndefined();
    }
    const odd = repo();
    fs.writeFileSync(path.join(odd, ".git", "HEAD"), "ref: refs/heads/../../config\n");
    expect(readRepository(odd)).toBeUndefined();
    const bare = path.join(tempDir(), "bare.git");
    execFileSync("git", ["init", "-q", "--bare", bare]);
    expect(readRepository(bare)).toBeUndefined();
  });
});

describe("createBranch writes a branch as git would", () => {
  const common = (dir: string) => path.join(dir, ".git");

  it("a loose ref git reads, lists and deletes as its own; no lock left", () => {
    const dir = repo();
    const head = g(dir, "rev-parse", "HEAD");
    expect(createBranch(common(dir), "warren/a-12345678", head)).toBe(true);
    expect(g(dir, "rev-parse", "--verify", "-q", "refs/heads/warren/a-12345678")).toBe(head);
    expect(g(dir, "branch", "--format=%(refname:short)").split("\n").sort()).toEqual([
      "main",
      "warren/a-12345678",
    ]);
    expect(g(dir, "fsck", "--no-progress")).toBe("");
    expect(fs.readdirSync(path.join(dir, ".git", "refs", "heads", "warren"))).toEqual([
      "a-12345678",
    ]);
    g(dir, "branch", "-D", "warren/a-12345678");
    expect(g(dir, "branch", "--format=%(refname:short)")).toBe("main");
  });

  it("writes nothing where git would refuse or decide: taken loose, packed, above, below", () => {
    const dir = repo();
    const head = g(dir, "rev-parse", "HEAD");
    const heads = path.join(dir, ".git", "refs", "heads");
    const only = () => g(dir, "for-each-ref", "--format=%(refname)", "refs/heads/").split("\n");
    g(dir, "branch", "taken");
    expect(createBranch(common(dir), "taken", head)).toBe(false);
    g(dir, "branch", "warren");
    expect(createBranch(common(dir), "warren/x", head)).toBe(false); // a loose ref above
    g(dir, "pack-refs", "--all");
    expect(fs.existsSync(path.join(heads, "warren"))).toBe(false);
    expect(createBranch(common(dir), "warren/x", head)).toBe(false); // a packed ref above
    expect(createBranch(common(dir), "taken", head)).toBe(false); // packed
    g(dir, "branch", "deep/er/one");
    g(dir, "pack-refs", "--all");
    expect(createBranch(common(dir), "deep/er", head)).toBe(false); // a packed ref below
    expect(createBranch(common(dir), "bad..name", head)).toBe(false);
    expect(createBranch(common(dir), "fine", "not-an-oid")).toBe(false);
    expect(only().sort()).toEqual(
      ["refs/heads/deep/er/one", "refs/heads/main", "refs/heads/taken", "refs/heads/warren"].sort(),
    );
  });

  it("leaves a lock another writer holds, and a shared repository, to git", () => {
    const dir = repo();
    const head = g(dir, "rev-parse", "HEAD");
    const lock = path.join(dir, ".git", "refs", "heads", "held.lock");
    fs.writeFileSync(lock, "");
    expect(createBranch(common(dir), "held", head)).toBe(false);
    expect(fs.existsSync(lock)).toBe(true);
    const shared = repo();
    g(shared, "config", "core.sharedRepository", "group");
    expect(createBranch(common(shared), "b", head)).toBe(false);
    expect(g(shared, "branch", "--format=%(refname:short)")).toBe("main");
  });
});

describe("createWorktreeEntry writes a worktree's entry as `git worktree add` does", () => {
  it("checked out by `git reset --hard`, git sees a worktree on the branch, as one it made", async () => {
    const dir = repo();
    const head = g(dir, "rev-parse", "HEAD");
    const common = path.join(dir, ".git");
    // One made by git, beside, to compare with.
    g(dir, "worktree", "add", "-q", "-b", "by-git", path.join(dir, ".w", "by-git"), "HEAD");
    const wt = path.join(dir, ".w", "by-hand");
    expect(createBranch(common, "by-hand", head)).toBe(true);
    const entry = createWorktreeEntry(common, wt, "by-hand");
    expect(entry).toBe(path.join(common, "worktrees", "by-hand"));
    g(wt, "reset", "--hard", "-q", "--no-recurse-submodules");
    fs.rmSync(path.join(entry!, "locked"));
    // The same files in both entries, the same contents but for the names.
    const files = (e: string) => fs.readdirSync(path.join(common, "worktrees", e)).sort();
    expect(files("by-hand")).toEqual(files("by-git"));
    for (const f of ["commondir", "gitdir", "HEAD"]) {
      const read = (e: string) =>
        fs.readFileSync(path.join(common, "worktrees", e, f), "utf8").replaceAll("by-git", "X");
      expect(read("by-hand").replaceAll("by-hand", "X")).toBe(read("by-git"));
    }
    expect(fs.readFileSync(path.join(wt, ".git"), "utf8")).toBe(
      fs.readFileSync(path.join(dir, ".w", "by-git", ".git"), "utf8").replace("by-git", "by-hand"),
    );
    // Git's own view: listed on its branch, clean, the branch taken, kept by prune, removable.
    const listed = g(dir, "worktree", "list", "--porcelain");
    expect(listed).toContain(`worktree ${wt}\nHEAD ${head}\nbranch refs/heads/by-hand`);
    expect(g(wt, "status", "--porcelain")).toBe("");
    expect(fs.readFileSync(path.join(wt, "a.txt"), "utf8")).toBe("a\n");
    expect(() => g(dir, "branch", "-D", "by-hand")).toThrow(/checked out|used by worktree/);
    g(dir, "worktree", "prune");
    expect(g(dir, "worktree", "list")).toContain(wt);
    g(dir, "worktree", "remove", wt);
    expect(fs.existsSync(wt)).toBe(false);
    expect(fs.existsSync(entry!)).toBe(false);
  });

  it("writes nothing when the entry's name or the path is taken", () => {
    const dir = repo();
    const common = path.join(dir, ".git");
    fs.mkdirSync(path.join(common, "worktrees", "taken"), { recursive: true });
    expect(createWorktreeEntry(common, path.join(dir, ".w", "taken"), "b")).toBeUndefined();
    expect(fs.readdirSync(path.join(common, "worktrees", "taken"))).toEqual([]);
    const there = path.join(dir, ".w", "there");
    fs.mkdirSync(there, { recursive: true });
    fs.writeFileSync(path.join(there, "mine.txt"), "mine\n");
    expect(createWorktreeEntry(common, there, "b")).toBeUndefined();
    expect(fs.existsSync(path.join(common, "worktrees", "there"))).toBe(false);
    expect(fs.readdirSync(there)).toEqual(["mine.txt"]);
  });
});
