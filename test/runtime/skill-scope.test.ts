// When a skill is "in use" (runtime/skill-scope.ts): from the response that loads it, or the turn
// a person runs it, until that turn ends — read from the agent's events, so a resumed turn is
// narrowed as before and the next turn is not. A command file declaring `allowed-tools` is in use
// for the turn a person runs it, the same way.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvent } from "../../src/agents/events.js";
import { createTree } from "../../src/agents/tree.js";
import { skillRefusal } from "../../src/runtime/skill-scope.js";
import { personCommands } from "../../src/skills/listing.js";
import { clearSkillsCache } from "../../src/skills/skills.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();
const savedHome = process.env.HOME;
const cwd = mkdtempSync(path.join(os.tmpdir(), "warren-skill-scope-unit-"));
let home = "";

beforeAll(() => {
  // The person's own skill (never held for trust), in a home of the test's.
  home = mkdtempSync(path.join(os.tmpdir(), "warren-skill-scope-home-"));
  mkdirSync(path.join(home, ".claude/skills/git"), { recursive: true });
  writeFileSync(
    path.join(home, ".claude/skills/git/SKILL.md"),
    "---\nname: git\ndescription: git\nallowed-tools: Bash(git status:*)\n---\nbody\n",
  );
  // The person's own command files: one narrowing (namespaced, as a subfolder's are), one not.
  mkdirSync(path.join(home, ".claude/commands/repo"), { recursive: true });
  writeFileSync(
    path.join(home, ".claude/commands/repo/status.md"),
    "---\nallowed-tools: Read, Bash(git status:*)\n---\nLook at the repository's $ARGUMENTS.\n",
  );
  writeFileSync(path.join(home, ".claude/commands/plain.md"), "Look at the $ARGUMENTS.\n");
  writeFileSync(
    path.join(home, ".claude/commands/log.md"),
    "---\nallowed-tools: Bash(git log:*)\n---\nLog: !`git log -1`\nOther: !`echo outside`\n",
  );
  process.env.HOME = home;
  clearSkillsCache();
});

afterAll(() => {
  process.env.HOME = savedHome;
  clearSkillsCache();
});

const echo = { command: "echo hi" };
const refusal = (agentId: string, args = echo) =>
  skillRefusal(database().db, agentId, cwd, "bash", args, "bash (echo hi)");

describe("a skill in use", () => {
  it("narrows from the response that loads it until the turn's answer; the next turn is free", async () => {
    const db = database().db;
    const root = await createTree(db, { name: "scope-model" });
    await appendEvent(db, root.id, "user", "look at the repo");
    expect(await refusal(root.id)).toBeUndefined();
    await appendEvent(db, root.id, "assistant", "", {
      tool_calls: [{ id: "c1", name: "skill", arguments: '{"name":"git"}' }],
    });
    const refused = await refusal(root.id);
    expect(refused).toMatchObject({ ok: false, error: { code: "NOT_ALLOWED" } });
    expect(JSON.stringify(refused)).toContain('the skill \\"git\\" is in use for this turn');
    expect(await refusal(root.id, { command: "git status" })).toBeUndefined();
    // Another response in the same turn: still narrowed.
    await appendEvent(db, root.id, "assistant", "", {
      tool_calls: [{ id: "c2", name: "bash", arguments: '{"command":"echo hi"}' }],
    });
    expect(await refusal(root.id)).toBeDefined();
    // The turn's answer ends it; the next turn starts free.
    await appendEvent(db, root.id, "assistant", "done");
    await appendEvent(db, root.id, "user", "something else");
    expect(await refusal(root.id)).toBeUndefined();
  });

  it("run by the person, it narrows that turn only; an interrupt ends it too", async () => {
    const db = database().db;
    const root = await createTree(db, { name: "scope-person" });
    await appendEvent(db, root.id, "user", 'Use the skill "git" (~/.claude/skills/git):\n\nbody');
    expect(await refusal(root.id)).toBeDefined();
    await appendEvent(db, root.id, "interrupted", "interrupted");
    await appendEvent(db, root.id, "user", "go on");
    expect(await refusal(root.id)).toBeUndefined();
  });
});

/** What the person's `/name ARGS` sends (as the TUI and `-p` expand it). */
async function ran(
  typed: string,
  shell?: (command: string) => Promise<string>,
): Promise<{ text: string; warnings: string[] }> {
  const [name, ...args] = typed.slice(1).split(" ");
  const command = personCommands(cwd, new Set(), { HOME: home }).commands.find(
    (c) => c.name === name,
  );
  return command!.expand(args.join(" "), { cwd, ...(shell ? { shell } : {}) });
}

describe("a command file's allowed-tools", () => {
  it("narrows the turn the person runs it, naming it, resumed or not; the next turn is free", async () => {
    const db = database().db;
    const root = await createTree(db, { name: "scope-command" });
    const { text: sent } = await ran("/repo:status branches");
    expect(sent).toMatch(/^Use the command "repo:status" \(.*status\.md\):\n\n/);
    expect(sent).toContain("Look at the repository's branches.");
    await appendEvent(db, root.id, "user", sent);
    const refused = await refusal(root.id);
    expect(refused).toMatchObject({ ok: false, error: { code: "NOT_ALLOWED" } });
    expect(JSON.stringify(refused)).toContain(
      'the command \\"/repo:status\\" is in use for this turn and its allowed-tools (Read, Bash(git status:*)) do not include it',
    );
    expect(await refusal(root.id, { command: "git status" })).toBeUndefined();
    const read = await skillRefusal(db, root.id, cwd, "read_file", { path: "x" }, "read_file");
    expect(read).toBeUndefined();
    // Mid-turn, as a worker finds it after a crash: nothing in memory, still narrowed.
    await appendEvent(db, root.id, "assistant", "", {
      tool_calls: [{ id: "c1", name: "bash", arguments: '{"command":"git status"}' }],
    });
    clearSkillsCache();
    expect(await refusal(root.id)).toBeDefined();
    // The turn's answer ends it; the next turn (not started by the command) is free.
    await appendEvent(db, root.id, "assistant", "done");
    await appendEvent(db, root.id, "user", "something else");
    expect(await refusal(root.id)).toBeUndefined();
  });

  it("a command without allowed-tools sends its text alone and narrows nothing", async () => {
    const db = database().db;
    const root = await createTree(db, { name: "scope-plain" });
    const { text: sent } = await ran("/plain logs");
    expect(sent).toBe("Look at the logs.");
    await appendEvent(db, root.id, "user", sent);
    expect(await refusal(root.id)).toBeUndefined();
  });

  it("narrows the command's own !`cmd` too: one its list leaves out is not run", async () => {
    const shell = (command: string) => Promise.resolve(`RAN ${command}`);
    const { text, warnings } = await ran("/log", shell);
    expect(text).toContain("Log: RAN git log -1");
    expect(text).toContain(
      "Other: [not run: `echo outside` — its allowed-tools (Bash(git log:*)) do not include it]",
    );
    expect(warnings).toEqual([
      "!`echo outside` not run: its allowed-tools (Bash(git log:*)) do not include it",
    ]);
  });
});
