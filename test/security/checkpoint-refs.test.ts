// A hostile model tries to take away the person's undo (issue 43): before a rewind it deletes the
// checkpoints from inside the sandbox every way git and the shell offer (`update-ref -d`, the
// refs' files, `pack-refs --all` then editing packed-refs, `reflog expire`, `gc --prune=now`,
// anything named like warren's under `.git`, a search of wherever warren's home may be for the
// vault),
// and the rewind still puts back exactly the checkpoint's files: the checkpoints' refs and the
// objects they wrote are in the agent's vault under warren's home, which the sandbox hides.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendEvent } from "../../src/agents/events.js";
import { takeCheckpoint } from "../../src/agents/checkpoints.js";
import { rewindAgent } from "../../src/agents/rewind.js";
import { createTree } from "../../src/agents/tree.js";
import { warrenHome } from "../../src/paths.js";
import { useTestDatabase } from "../support/db.js";
import { committedRepo, g } from "../support/git.js";
import { bash, makeFixture, output, settingsFrom, type Fixture } from "./fixture.js";

const database = useTestDatabase();
let fx: Fixture;
beforeEach(() => {
  fx = makeFixture({ sandbox: "on" });
});
afterEach(() => fx.cleanup());

/** Every file below `dir` but `.git`, with its content. */
function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (rel: string) => {
    for (const d of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${d.name}` : d.name;
      if (d.name === ".git") continue;
      if (d.isDirectory()) visit(r);
      else out[r] = fs.readFileSync(path.join(dir, r), "utf8");
    }
  };
  visit("");
  return out;
}

const ATTACK = [
  // The refs, by git and by hand, loose and packed, and their logs.
  "git for-each-ref --format='%(refname)' | grep -v '^refs/heads/' | xargs -r -n1 git update-ref -d",
  "rm -rf .git/refs/warren .git/logs/refs/warren",
  "git pack-refs --all",
  "sed -i '/warren/d' .git/packed-refs",
  "git reflog expire --expire=now --all",
  "git stash clear",
  // What no ref holds any more.
  "git gc -q --prune=now",
  "git prune --expire=now",
  // Anything of warren's in the repository, and wherever else the vault could be.
  "find .git -iname '*warren*' -prune -exec rm -rf {} +",
  // Where warren's home can be (its default under any home, and the real one's parent, as an
  // attacker who read the code would guess); not all of `/`, which under a loaded CI took longer
  // than the test's minute.
  `find ${JSON.stringify(path.dirname(warrenHome()))} "$HOME/.local/share" /root/.local/share` +
    " -maxdepth 4 -type d -name checkpoints -print 2>/dev/null" +
    ' | while read d; do rm -rf "$d"; done',
  "rm -rf ~/.local/share/warren ~/.warren",
  "echo attack done",
].join("; ");

describe("the checkpoints, against the agent's own bash", () => {
  it("survive every deletion the sandbox allows: the rewind restores exactly", async () => {
    const { db } = database();
    const dir = fx.cwd;
    committedRepo(dir, { "tracked.txt": "committed\n" });
    // What the agent's first turn left: an edit and a new file, neither committed.
    fs.writeFileSync(path.join(dir, "tracked.txt"), "edited by turn 1\n");
    fs.writeFileSync(path.join(dir, "made.txt"), "made by turn 1\n");
    const root = await createTree(db, { name: "victim", cwd: dir });
    await appendEvent(db, root.id, "user", "turn 1");
    await appendEvent(db, root.id, "assistant", "done 1");
    const turn2 = await appendEvent(db, root.id, "user", "turn 2");
    const row = await takeCheckpoint(db, root, turn2.id, { maxFileBytes: 1 << 20 });
    expect(row?.commit_sha).toMatch(/^[0-9a-f]{40}$/);
    const before = files(dir);

    // Turn 2: the agent ruins the files, then goes after the checkpoints.
    const ruin = "echo ruined > tracked.txt; rm made.txt; echo junk > junk.txt; ";
    const ran = output(await bash(ruin + ATTACK, dir, settingsFrom()));
    expect(ran.output).toContain("attack done");
    expect(fs.readFileSync(path.join(dir, "tracked.txt"), "utf8")).toBe("ruined\n");
    // The attack did what it could in the repository: no ref of warren's is left there.
    expect(g(dir, "for-each-ref", "refs/warren/")).toBe("");

    const result = await rewindAgent(db, root, 2, "files", { maxFileBytes: 1 << 20 });
    expect(result.files?.removed).toEqual(["junk.txt"]);
    expect(files(dir)).toEqual(before);
  }, 120_000);
});
