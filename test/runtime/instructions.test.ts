// Instruction files (SPEC section 9): the global AGENTS.md, then AGENTS.md / CLAUDE.md from the
// repository root down to the agent's directory, in its system prompt; capped; read once.
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentRow } from "../../src/agents/agents.sql.js";
import {
  clearInstructionsCache,
  instructionFilesLine,
  instructionsFor,
  instructionsRechecked,
  INSTRUCTIONS_CAP,
} from "../../src/runtime/instructions.js";
import { systemPrompt } from "../../src/runtime/system-prompt.js";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { runWarren, warrenEnv } from "../support/warren.js";
import { requestsOf } from "./e2e-support.js";

/** A git repository (a `.git` directory is what marks its root) with instruction files. */
function makeRepo(): { root: string; leaf: string; env: Record<string, string> } {
  const base = mkdtempSync(path.join(os.tmpdir(), "warren-instr-"));
  const root = path.join(base, "repo");
  const leaf = path.join(root, "pkg", "deep");
  mkdirSync(path.join(root, ".git"), { recursive: true });
  mkdirSync(leaf, { recursive: true });
  // Above the repository: never read.
  writeFileSync(path.join(base, "AGENTS.md"), "OUTSIDE THE REPO\n");
  writeFileSync(path.join(root, "AGENTS.md"), "Root rule: run npm test.\n");
  // Both AGENTS.md and CLAUDE.md of one directory are read, AGENTS.md first.
  writeFileSync(path.join(root, "CLAUDE.md"), "Root Claude rule.\n");
  writeFileSync(path.join(root, "pkg", "CLAUDE.md"), "Package rule: tabs.\n");
  const config = path.join(base, "config");
  mkdirSync(path.join(config, "warren"), { recursive: true });
  writeFileSync(path.join(config, "warren", "AGENTS.md"), "Global rule: be brief.\n");
  return { root, leaf, env: { XDG_CONFIG_HOME: config, HOME: base } };
}

const row = (cwd: string, name = "root"): AgentRow =>
  ({
    id: "00000000-0000-0000-0000-000000000001",
    name,
    cwd,
    system_prompt: null,
  }) as unknown as AgentRow;

beforeEach(() => clearInstructionsCache());
afterEach(() => clearInstructionsCache());

describe("instruction files", () => {
  it("reads the global file, then root to leaf AGENTS.md and CLAUDE.md", () => {
    const { root, leaf, env } = makeRepo();
    const { files, text } = instructionsFor(leaf, env);
    expect(files.map((f) => f.path)).toEqual([
      path.join(env.XDG_CONFIG_HOME!, "warren", "AGENTS.md"),
      path.join(root, "AGENTS.md"),
      path.join(root, "CLAUDE.md"),
      path.join(root, "pkg", "CLAUDE.md"),
    ]);
    const global = text.indexOf("Global rule");
    const rootAt = text.indexOf(`Instructions from ${path.join(root, "AGENTS.md")}:\nRoot rule`);
    const pkgAt = text.indexOf(
      `Instructions from ${path.join(root, "pkg", "CLAUDE.md")}:\nPackage rule`,
    );
    expect(global).toBeGreaterThanOrEqual(0);
    expect(rootAt).toBeGreaterThan(global);
    expect(pkgAt).toBeGreaterThan(rootAt);
    expect(text).not.toContain("OUTSIDE THE REPO");
    const claudeAt = text.indexOf(
      `Instructions from ${path.join(root, "CLAUDE.md")}:\nRoot Claude`,
    );
    expect(claudeAt).toBeGreaterThan(rootAt);
    expect(pkgAt).toBeGreaterThan(claudeAt);
    expect(instructionFilesLine(leaf, env)).toBe(
      "instructions: ~/config/warren/AGENTS.md, ~/repo/AGENTS.md, ~/repo/CLAUDE.md, ~/repo/pkg/CLAUDE.md",
    );
  });

  it("outside a repository reads only the working directory (and the global file)", () => {
    const base = mkdtempSync(path.join(os.tmpdir(), "warren-norepo-"));
    const dir = path.join(base, "sub");
    mkdirSync(dir);
    writeFileSync(path.join(base, "AGENTS.md"), "PARENT DIR\n");
    writeFileSync(path.join(dir, "CLAUDE.md"), "Here.\n");
    const env = { XDG_CONFIG_HOME: path.join(base, "none"), HOME: base };
    expect(instructionsFor(dir, env).files.map((f) => f.path)).toEqual([
      path.join(dir, "CLAUDE.md"),
    ]);
  });

  it("caps them at 32 KiB and says so", () => {
    const { root, leaf, env } = makeRepo();
    writeFileSync(path.join(root, "pkg", "CLAUDE.md"), "é".repeat(30_000));
    const { text } = instructionsFor(leaf, env);
    expect(Buffer.byteLength(text, "utf8")).toBeLessThanOrEqual(INSTRUCTIONS_CAP);
    expect(text).toMatch(/\[instructions cut by warren: they are over 32 KiB/);
    expect(text).toContain("Root rule"); // root first: the leaf's end is what is cut
    expect(text).not.toContain("\uFFFD");
  });

  it("is read once per directory: a later request does not wait on the disk", async () => {
    const { root, leaf, env } = makeRepo();
    const file = path.join(root, "AGENTS.md");
    const atime = new Date(1_700_000_000_000);
    const mtime = new Date(1_700_000_000_000);
    utimesSync(file, atime, mtime); // whole seconds: restored exactly below
    expect(instructionsFor(leaf, env).text).toContain("Root rule");
    writeFileSync(file, "Changed rule.\n");
    utimesSync(file, atime, mtime); // same path + mtime: the cache holds
    expect(instructionsFor(leaf, env, 0).text).toContain("Root rule");
    await instructionsRechecked(leaf, env);
    expect(instructionsFor(leaf, env, 0).text).toContain("Root rule");
    // A new mtime: the background check notices, and the next request gets the new text.
    utimesSync(file, atime, new Date(mtime.getTime() + 5000));
    instructionsFor(leaf, env, 0);
    await instructionsRechecked(leaf, env);
    expect(instructionsFor(leaf, env).text).toContain("Changed rule.");
  });

  it("are in the system prompt of an agent, read from its own working directory", () => {
    const { root, leaf, env } = makeRepo();
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      const parentPrompt = systemPrompt(row(root), undefined);
      expect(parentPrompt).toContain("Root rule");
      expect(parentPrompt).not.toContain("Package rule");
      // A child working elsewhere (e.g. its worktree, a subdirectory) reads its own files.
      const childPrompt = systemPrompt(row(leaf, "child"), row(root));
      expect(childPrompt).toContain("Root rule");
      expect(childPrompt).toContain("Package rule");
      expect(childPrompt).toMatch(/^Your name: child$/m);
    } finally {
      process.env = saved;
    }
  });
});

describe("instruction files end to end", () => {
  const database = useTestDatabase();
  let fake: FakeModel;
  beforeEach(async () => {
    fake = await startFakeModel();
  });
  afterEach(async () => {
    await fake.close();
  });

  it("the model receives them in the root's and a fresh child's system prompt", async () => {
    const { root, leaf, env } = makeRepo();
    fake.script([
      {
        agent: "root",
        times: 1,
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "kid", prompt: "Say hi.", context: "fresh" } },
            { name: "wait", arguments: { timeout: 30, from_agents: ["kid"] } },
          ],
        },
      },
      {
        agent: "kid",
        times: 1,
        reply: { toolCalls: [{ name: "send", arguments: { to: "parent", message: "hi" } }] },
      },
      { agent: "kid", times: 1, reply: { text: "Sent." } },
      { agent: "root", times: 1, reply: { text: "Done." } },
    ]);
    const runEnv = warrenEnv({
      databaseUrl: database().url,
      modelUrl: fake.baseURL,
      extra: {},
    });
    const configHome = path.join(runEnv.XDG_CONFIG_HOME!, "warren");
    mkdirSync(configHome, { recursive: true });
    writeFileSync(path.join(configHome, "AGENTS.md"), "Global rule: be brief.\n");
    const run = await runWarren(["-p", "Go.", "--timeout", "60"], runEnv, leaf);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    for (const name of ["root", "kid"]) {
      const system = requestsOf(fake, name)[0]!.systemPrompt!;
      const at = [
        system.indexOf(`Instructions from ${path.join(configHome, "AGENTS.md")}:\nGlobal rule`),
        system.indexOf(`Instructions from ${path.join(root, "AGENTS.md")}:\nRoot rule`),
        system.indexOf(`Instructions from ${path.join(root, "pkg", "CLAUDE.md")}:\nPackage rule`),
      ];
      expect(at[0]).toBeGreaterThan(0);
      expect(at[1]).toBeGreaterThan(at[0]!);
      expect(at[2]).toBeGreaterThan(at[1]!);
    }
    void env;
  });
});
