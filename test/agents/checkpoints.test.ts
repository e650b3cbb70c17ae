// Checkpoints and their restore on real repositories and directories (issue 43): what a
// checkpoint holds (tracked and untracked unignored files, large ones skipped and named), that it
// is taken once per turn, that an unchanged directory shares its commit, that a restore puts back
// exactly the checkpoint's files (leaving ignored and skipped ones alone) and can run twice, that
// a planted hook, fsmonitor or filter driver never runs, and the store outside a repository.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { appendEvent } from "../../src/agents/events.js";
import { takeCheckpoint, checkpointRepository, vaultOf } from "../../src/agents/checkpoints.js";
import { restoreTree } from "../../src/agents/checkpoint-git.js";
import {
  STORE_MAX_FILES,
  storeRestore,
  storeSnapshot,
  TooManyFiles,
} from "../../src/agents/checkpoint-store.js";
import { createTree } from "../../src/agents/tree.js";
import { useTestDatabase } from "../support/db.js";
import { g } from "../support/git.js";

const database = useTestDatabase();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function tmp(prefix: string): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  dirs.push(d);
  return d;
}

function repo(): string {
  const dir = tmp("warren-ckpt-");
  g(dir, "init", "-q", "-b", "main");
  g(dir, "config", "user.email", "t@example.com");
  g(dir, "config", "user.name", "t");
  fs.writeFileSync(path.join(dir, ".gitignore"), "ignored.log\n");
  fs.writeFileSync(path.join(dir, "tracked.txt"), "one\n");
  fs.writeFileSync(path.join(dir, "gone.txt"), "will be deleted\n");
  fs.mkdirSync(path.join(dir, "sub"));
  fs.writeFileSync(path.join(dir, "sub", "deep.txt"), "deep\n");
  g(dir, "add", "-A");
  g(dir, "commit", "-q", "-m", "init");
  return dir;
}

/** Every file below `dir` (no .git) with its content: what "the same files" means here. */
function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (rel: string) => {
    for (const d of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) {
        if (d.name !== ".git") visit(r);
      } else out[r] = fs.readFileSync(path.join(dir, r), "utf8");
    }
  };
  visit("");
  return out;
}

const BIG = 1000;

describe("checkpoints in a git repository", () => {
  it("holds tracked and untracked files, skips large ones, and restores exactly", async () => {
    const { db } = database();
    const dir = repo();
    fs.writeFileSync(path.join(dir, "tracked.txt"), "one, edited before the turn\n");
    fs.writeFileSync(path.join(dir, "untracked.txt"), "new and unignored\n");
    fs.writeFileSync(path.join(dir, "ignored.log"), "ignored v1\n");
    fs.writeFileSync(path.join(dir, "big.bin"), "x".repeat(BIG + 1));
    const root = await createTree(db, { name: "ck", cwd: dir });
    const start = await appendEvent(db, root.id, "user", "turn 1");
    const row = await takeCheckpoint(db, root, start.id, { maxFileBytes: BIG });
    expect(row?.commit_sha).toMatch(/^[0-9a-f]{40}$/);
    // Kept in the agent's vault under warren's home, not in the repository.
    expect(row?.ref).toBe(`refs/warren/checkpoints/${root.id}`);
    const git = (await checkpointRepository(db, root, dir))!;
    const vault = await vaultOf(git, root.id);
    expect(g(dir, `--git-dir=${vault.dir}`, "rev-parse", row!.ref!)).toBe(row!.commit_sha);
    expect(g(dir, "for-each-ref", "refs/warren/")).toBe("");
    expect(row?.skipped).toEqual(["big.bin"]);
    const listed = g(
      dir,
      `--git-dir=${vault.dir}`,
      "ls-tree",
      "-r",
      "--name-only",
      row!.commit_sha!,
    ).split("\n");
    expect(listed.sort()).toEqual(
      [".gitignore", "gone.txt", "sub/deep.txt", "tracked.txt", "untracked.txt"].sort(),
    );
    // The repository's own index, HEAD and status are untouched.
    const status = g(dir, "status", "--porcelain").split("\n");
    expect(status.map((l) => l.trim()).sort()).toEqual(
      ["M tracked.txt", "?? big.bin", "?? untracked.txt"].sort(),
    );
    const before = files(dir);

    // Taken once per turn: the same row, no second commit.
    const again = await takeCheckpoint(db, root, start.id, { maxFileBytes: BIG });
    expect(again?.id).toBe(row?.id);

    // The turn: edits, creates, deletes (a file and a whole directory), touches ignored and big.
    fs.writeFileSync(path.join(dir, "tracked.txt"), "changed by the turn\n");
    fs.writeFileSync(path.join(dir, "created.txt"), "created by the turn\n");
    fs.mkdirSync(path.join(dir, "newdir", "inner"), { recursive: true });
    fs.writeFileSync(path.join(dir, "newdir", "inner", "x.txt"), "x\n");
    fs.rmSync(path.join(dir, "gone.txt"));
    fs.rmSync(path.join(dir, "sub"), { recursive: true });
    fs.writeFileSync(path.join(dir, "ignored.log"), "ignored v2\n");
    fs.writeFileSync(path.join(dir, "big.bin"), "y".repeat(BIG + 5));

    const restored = await restoreTree(git, vault, row!.commit_sha!, BIG);
    expect(restored.removed.sort()).toEqual(["created.txt", "newdir/inner/x.txt"]);
    expect(restored.written.sort()).toEqual(["gone.txt", "sub/deep.txt", "tracked.txt"]);
    const after = files(dir);
    // Exactly the checkpoint's files back; the ignored and the skipped large file left alone.
    expect({ ...after, "ignored.log": "", "big.bin": "" }).toEqual({
      ...before,
      "ignored.log": "",
      "big.bin": "",
    });
    expect(after["ignored.log"]).toBe("ignored v2\n");
    expect(after["big.bin"]).toBe("y".repeat(BIG + 5));
    expect(fs.existsSync(path.join(dir, "newdir"))).toBe(false);
    // A second run (a crash half way, run again) finds nothing to do.
    const second = await restoreTree(git, vault, row!.commit_sha!, BIG);
    expect(second).toEqual({ written: [], removed: [] });
  });

  it("shares the commit when nothing changed, and records what the previous turn changed", async () => {
    const { db } = database();
    const dir = repo();
    const root = await createTree(db, { name: "ck2", cwd: dir });
    const e1 = await appendEvent(db, root.id, "user", "1");
    const c1 = await takeCheckpoint(db, root, e1.id, { maxFileBytes: BIG });
    const e2 = await appendEvent(db, root.id, "mail_in", "2");
    const c2 = await takeCheckpoint(db, root, e2.id, { maxFileBytes: BIG });
    expect(c2?.commit_sha).toBe(c1?.commit_sha);
    expect(c2?.ref).toBe(c1?.ref);
    fs.writeFileSync(path.join(dir, "a.txt"), "a\n");
    fs.writeFileSync(path.join(dir, "tracked.txt"), "t\n");
    const e3 = await appendEvent(db, root.id, "mail_in", "3");
    const c3 = await takeCheckpoint(db, root, e3.id, { maxFileBytes: BIG });
    expect(c3?.commit_sha).not.toBe(c1?.commit_sha);
    const rows = await db.execute<{ start_event: string; files: string[] | null }>(
      sql`select start_event, files from checkpoints where agent_id = ${root.id} order by start_event`,
    );
    expect(rows.rows.map((r) => r.files)).toEqual([[], ["a.txt", "tracked.txt"], null]);
    // Only the changed checkpoint made a commit: the vault's ref has the first as its parent, and
    // the first the repository's HEAD.
    const vault = await vaultOf((await checkpointRepository(db, root, dir))!, root.id);
    expect(g(dir, `--git-dir=${vault.dir}`, "rev-list", c3!.ref!)).toBe(
      `${c3!.commit_sha}\n${c1!.commit_sha}\n${g(dir, "rev-parse", "HEAD")}`,
    );
  });

  it("never runs a planted hook, fsmonitor or filter driver", async () => {
    const { db } = database();
    const dir = repo();
    const marker = path.join(path.dirname(dir), `${path.basename(dir)}-ran`);
    const evil = path.join(path.dirname(dir), `${path.basename(dir)}-evil.sh`);
    fs.writeFileSync(
      evil,
      `#!/bin/sh\necho "$0 $*" >> '${marker}'\nif [ -f "$1" ]; then cat "$1"; else cat; fi\n`,
      { mode: 0o755 },
    );
    dirs.push(marker, evil);
    for (const hook of [
      "reference-transaction",
      "post-commit",
      "pre-commit",
      "post-index-change",
    ]) {
      fs.writeFileSync(path.join(dir, ".git", "hooks", hook), `#!/bin/sh\n'${evil}' ${hook}\n`, {
        mode: 0o755,
      });
    }
    g(dir, "config", "core.fsmonitor", evil);
    g(dir, "config", "filter.evil.clean", evil);
    g(dir, "config", "filter.evil.smudge", evil);
    fs.writeFileSync(path.join(dir, ".gitattributes"), "* filter=evil\n");
    // The plant is live: a plain git runs it.
    fs.writeFileSync(path.join(dir, "probe.txt"), "p\n");
    g(dir, "add", "probe.txt");
    expect(fs.existsSync(marker)).toBe(true);
    fs.rmSync(marker);

    const root = await createTree(db, { name: "ck3", cwd: dir });
    const e1 = await appendEvent(db, root.id, "user", "1");
    const row = await takeCheckpoint(db, root, e1.id, { maxFileBytes: BIG });
    fs.writeFileSync(path.join(dir, "tracked.txt"), "changed\n");
    fs.writeFileSync(path.join(dir, "made.txt"), "made\n");
    const git = (await checkpointRepository(db, root, dir))!;
    await restoreTree(git, await vaultOf(git, root.id), row!.commit_sha!, BIG);
    expect(fs.readFileSync(path.join(dir, "tracked.txt"), "utf8")).toBe("one\n");
    expect(fs.existsSync(marker)).toBe(false);
  });
  it("still restores a checkpoint taken before the vaults (its commit in the repository)", async () => {
    const { db } = database();
    const dir = repo();
    fs.writeFileSync(path.join(dir, "tracked.txt"), "as the old checkpoint holds it\n");
    const old = g(dir, "stash", "create");
    const before = files(dir);
    fs.writeFileSync(path.join(dir, "tracked.txt"), "changed since\n");
    const root = await createTree(db, { name: "ck4", cwd: dir });
    const git = (await checkpointRepository(db, root, dir))!;
    const restored = await restoreTree(git, await vaultOf(git, root.id), old, BIG);
    expect(restored.written).toEqual(["tracked.txt"]);
    expect(files(dir)).toEqual(before);
  });
});

describe("checkpoints outside a repository", () => {
  it("copies no directory with more files than it keeps (a home, /tmp): one clear error", () => {
    const home = tmp("warren-ckpt-home-");
    const dir = tmp("warren-ckpt-many-");
    for (let i = 0; i <= STORE_MAX_FILES; i++) fs.writeFileSync(path.join(dir, `f${i}`), "");
    expect(() => storeSnapshot(dir, BIG, { WARREN_HOME: home })).toThrow(TooManyFiles);
    expect(() => storeSnapshot(dir, BIG, { WARREN_HOME: home })).toThrow(
      /more than 2000 files outside a git repository/,
    );
    // Nothing was copied before the count was reached.
    expect(fs.existsSync(path.join(home, "checkpoints"))).toBe(false);
  });

  it("copies into warren's home by content and restores exactly", () => {
    const home = tmp("warren-ckpt-home-");
    const dir = tmp("warren-ckpt-plain-");
    const env = { WARREN_HOME: home };
    fs.writeFileSync(path.join(dir, "a.txt"), "a\n");
    fs.mkdirSync(path.join(dir, "d"));
    fs.writeFileSync(path.join(dir, "d", "b.txt"), "b\n", { mode: 0o640 });
    fs.writeFileSync(path.join(dir, "big.bin"), "x".repeat(BIG + 1));
    fs.symlinkSync("a.txt", path.join(dir, "link"));
    const snap = storeSnapshot(dir, BIG, env);
    expect(snap.skipped).toEqual(["big.bin"]);
    const before = files(dir);
    fs.writeFileSync(path.join(dir, "a.txt"), "changed\n");
    fs.rmSync(path.join(dir, "d"), { recursive: true });
    fs.writeFileSync(path.join(dir, "new.txt"), "new\n");
    fs.rmSync(path.join(dir, "link"));
    const restored = storeRestore(dir, snap.key, BIG, env);
    expect(restored.removed).toEqual(["new.txt"]);
    expect(files(dir)).toEqual(before);
    expect(fs.readlinkSync(path.join(dir, "link"))).toBe("a.txt");
    expect(fs.statSync(path.join(dir, "d", "b.txt")).mode & 0o777).toBe(0o640);
    expect(storeRestore(dir, snap.key, BIG, env)).toEqual({ written: [], removed: [] });
  });
});
