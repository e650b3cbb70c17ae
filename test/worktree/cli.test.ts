// `warren diff|merge|discard AGENT` and `warren ls`'s worktrees, through the built command line
// on a real repository (issue 30).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createTree, killAgent, reapDead } from "../../src/agents/tree.js";
import { forkTool } from "../../src/tools/fork.js";
import { useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { toolContext } from "../support/tool-context.js";
import { runWarren, warrenEnv } from "../support/warren.js";
import { g } from "../support/git.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe("warren diff, merge, discard, ls", () => {
  it("shows, merges and discards a worktree child's change; ls lists the worktrees", async () => {
    const { db, url } = database();
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-wtcli-")));
    dirs.push(dir);
    g(dir, "init", "-q", "-b", "main");
    fs.writeFileSync(path.join(dir, "a.txt"), "a\n");
    g(dir, "add", "-A");
    g(dir, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "init");
    const root = await createTree(db, { name: "root", cwd: dir });
    const ctx = await toolContext(db, bus(), root.id, { cwd: dir });
    for (const name of ["keep", "drop"]) {
      const next = { ...ctx, toolCallId: `call_${name}` };
      const made = await forkTool.run({ name, prompt: "p", isolation: "worktree" }, next as never);
      expect(made.ok).toBe(true);
    }
    const env = warrenEnv({ databaseUrl: url });
    const wt = (name: string) =>
      fs.readdirSync(path.join(dir, ".warren", "worktrees")).find((d) => d.startsWith(name))!;
    fs.writeFileSync(path.join(dir, ".warren", "worktrees", wt("keep"), "b.txt"), "b\nb\n");
    fs.writeFileSync(path.join(dir, ".warren", "worktrees", wt("drop"), "a.txt"), "dropped\n");

    const ls = await runWarren(["ls", "--tree", root.id], env);
    expect(ls.code).toBe(0);
    expect(ls.stdout).toMatch(/worktrees \(warren diff\|merge\|discard AGENT\):/);
    expect(ls.stdout).toMatch(/keep \w{8} {2}warren\/keep-\w{8} {2}1 file \+2 -0/);

    const diff = await runWarren(["diff", "keep", "--tree", root.id], env);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain("+++ b/b.txt");

    const unconfirmed = await runWarren(["discard", "drop", "--tree", root.id], env);
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.stderr.trim().split("\n")).toHaveLength(1);
    expect(unconfirmed.stderr).toMatch(/--yes/);
    await killAgent(db, { targetId: (await nameToId("drop"))!, byAgentId: null });
    const discarded = await runWarren(["discard", "drop", "--yes", "--tree", root.id], env);
    expect(discarded.stdout).toMatch(/^removed .*drop-/);
    expect(discarded.code).toBe(0);

    // Running children are refused in one line; once dead, merged and cleaned.
    const refused = await runWarren(["merge", "keep", "--tree", root.id], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is running; merge once it is idle or dead/);
    await killAgent(db, { targetId: (await nameToId("keep"))!, byAgentId: null });
    await reapDead(db, root.id);
    const reapedLs = await runWarren(["ls", "--tree", root.id], env);
    expect(reapedLs.stdout).toMatch(
      /keep \w{8} {2}warren\/keep-\w{8} {2}1 file \+2 -0 \(reaped, unmerged\)/,
    );
    // Reaped: named by the id ls shows.
    const keepId = (await nameToId("keep"))!.slice(0, 8);
    const merged = await runWarren(["merge", keepId, "--tree", root.id], env);
    expect(merged.stderr).toBe("");
    expect(merged.stdout).toMatch(
      /^merged warren\/keep-\w{8} into .*; worktree and branch removed/,
    );
    expect(fs.readFileSync(path.join(dir, "b.txt"), "utf8")).toBe("b\nb\n");
    expect(g(dir, "branch", "--format=%(refname:short)")).toBe("main");

    const none = await runWarren(["diff", "root", "--tree", root.id], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/has no worktree/);

    async function nameToId(name: string) {
      const r = await db.execute<{ id: string }>(
        `select id from agents where name = '${name}' and tree_id = '${root.id}'` as never,
      );
      return r.rows[0]?.id;
    }
  });
});
