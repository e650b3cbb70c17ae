// The person's own instruction files (~/.claude/CLAUDE.md, ~/.codex/AGENTS.md), both AGENTS.md and
// CLAUDE.md of a directory, and Claude Code's `@path` imports (SPEC §9): expanded relative to the
// importing file, inside the repository or home, at most 5 deep, each file once; a cycle, a miss
// or an out-of-bounds path is one warning; an import is an instruction file (accepted, guarded).
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acceptAtStart, clearAcceptedCache } from "../../src/config/accepted-files.js";
import { importPaths } from "../../src/runtime/instruction-imports.js";
import { guardedWriteTarget } from "../../src/runtime/guarded-files.js";
import {
  clearInstructionsCache,
  instructionCandidates,
  instructionFilesLine,
  instructionsFor,
  instructionsRechecked,
} from "../../src/runtime/instructions.js";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { runWarren, warrenEnv } from "../support/warren.js";
import { requestsOf } from "./e2e-support.js";

interface World {
  home: string;
  repo: string;
  env: Record<string, string>;
}

/** A home with a repository in it; XDG and warren's data inside the home. */
function makeWorld(): World {
  const home = mkdtempSync(path.join(os.tmpdir(), "warren-imports-"));
  const repo = path.join(home, "repo");
  mkdirSync(path.join(repo, ".git"), { recursive: true });
  return {
    home,
    repo,
    env: {
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, "config"),
      WARREN_HOME: path.join(home, "data"),
    },
  };
}

function put(file: string, text: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

/** How many times `needle` occurs in `text`. */
const count = (text: string, needle: string) => text.split(needle).length - 1;

beforeEach(() => {
  clearInstructionsCache();
  clearAcceptedCache();
});
afterEach(() => clearInstructionsCache());

describe("@path imports: what counts as one", () => {
  it("a token after white space or at a line's start, not in code spans or fenced blocks", () => {
    const text = [
      "See @docs/notes.md and @~/rules.md.",
      "@./local.md",
      "mail me at a@b.com, run `npm i @types/node`",
      "```sh",
      "npm i @scope/pkg",
      "```",
      "~~~",
      "@inside-tilde.md",
      "~~~",
      "with a space: @my\\ notes.md",
      "twice: @docs/notes.md",
    ].join("\n");
    expect(importPaths(text)).toEqual(["docs/notes.md", "~/rules.md", "./local.md", "my notes.md"]);
  });
});

describe("the person's own files and both files of a directory", () => {
  it("reads ~/.claude/CLAUDE.md and ~/.codex/AGENTS.md after warren's global file", () => {
    const { home, repo, env } = makeWorld();
    put(path.join(env.XDG_CONFIG_HOME!, "warren", "AGENTS.md"), "WARREN GLOBAL\n");
    put(path.join(home, ".claude", "CLAUDE.md"), "CLAUDE GLOBAL\n");
    put(path.join(home, ".codex", "AGENTS.md"), "CODEX GLOBAL\n");
    put(path.join(repo, "AGENTS.md"), "REPO AGENTS\n");
    const { text } = instructionsFor(repo, env);
    const at = ["WARREN GLOBAL", "CLAUDE GLOBAL", "CODEX GLOBAL", "REPO AGENTS"].map((t) =>
      text.indexOf(t),
    );
    expect(at[0]).toBeGreaterThanOrEqual(0);
    for (let i = 1; i < at.length; i++) expect(at[i]).toBeGreaterThan(at[i - 1]!);
    expect(instructionFilesLine(repo, env)).toBe(
      "instructions: ~/config/warren/AGENTS.md, ~/.claude/CLAUDE.md, ~/.codex/AGENTS.md, ~/repo/AGENTS.md",
    );
  });

  it("a CLAUDE.md that imports its neighbour AGENTS.md: each read once, no warning", () => {
    const { repo, env } = makeWorld();
    put(path.join(repo, "AGENTS.md"), "SHARED RULES\n");
    put(path.join(repo, "CLAUDE.md"), "@AGENTS.md\nCLAUDE ONLY\n");
    const got = instructionsFor(repo, env);
    expect(count(got.text, "SHARED RULES")).toBe(1);
    expect(count(got.text, "CLAUDE ONLY")).toBe(1);
    expect(got.warnings).toEqual([]);
    expect(got.files.map((f) => path.basename(f.path))).toEqual(["AGENTS.md", "CLAUDE.md"]);
  });

  it("an AGENTS.md that imports CLAUDE.md: CLAUDE.md follows it once", () => {
    const { repo, env } = makeWorld();
    put(path.join(repo, "AGENTS.md"), "AGENTS FIRST\nsee @CLAUDE.md\n");
    put(path.join(repo, "CLAUDE.md"), "CLAUDE TEXT\n");
    const got = instructionsFor(repo, env);
    expect(count(got.text, "CLAUDE TEXT")).toBe(1);
    expect(
      got.files.map((f) => [path.basename(f.path), f.importedBy && path.basename(f.importedBy)]),
    ).toEqual([
      ["AGENTS.md", undefined],
      ["CLAUDE.md", "AGENTS.md"],
    ]);
  });
});

describe("@path imports", () => {
  it("expands them relative to the importing file, nested, and from the home with ~", () => {
    const { home, repo, env } = makeWorld();
    put(path.join(repo, "CLAUDE.md"), "TOP\n@docs/notes.md\n");
    put(path.join(repo, "docs", "notes.md"), "NOTES\n@../style/guide.md\n");
    put(path.join(repo, "style", "guide.md"), "GUIDE\n@~/personal.md\n");
    put(path.join(home, "personal.md"), "PERSONAL\n");
    const got = instructionsFor(repo, env);
    const order = ["TOP", "NOTES", "GUIDE", "PERSONAL"].map((t) => got.text.indexOf(t));
    for (let i = 1; i < order.length; i++) expect(order[i]).toBeGreaterThan(order[i - 1]!);
    expect(got.text).toContain(`Instructions from ${path.join(repo, "docs", "notes.md")}:\nNOTES`);
    expect(got.warnings).toEqual([]);
    expect(instructionFilesLine(repo, env)).toBe(
      "instructions: ~/repo/CLAUDE.md, ~/repo/docs/notes.md (imported), ~/repo/style/guide.md (imported), ~/personal.md (imported)",
    );
  });

  it("a miss, a cycle and a path outside the repository and home are one warning each", () => {
    const { repo, env } = makeWorld();
    const outside = mkdtempSync(path.join(os.tmpdir(), "warren-outside-"));
    put(path.join(outside, "secret.md"), "OUTSIDE TEXT\n");
    put(
      path.join(repo, "CLAUDE.md"),
      `@missing.md\n@a.md\n@${path.join(outside, "secret.md")}\nagain @missing.md\n`,
    );
    put(path.join(repo, "a.md"), "A TEXT\n@b.md\n");
    put(path.join(repo, "b.md"), "B TEXT\n@a.md\n");
    const got = instructionsFor(repo, env);
    expect(count(got.text, "A TEXT")).toBe(1);
    expect(count(got.text, "B TEXT")).toBe(1);
    expect(got.text).not.toContain("OUTSIDE TEXT");
    expect(got.warnings).toEqual([
      "instructions: ~/repo/CLAUDE.md imports ~/repo/missing.md, which is not there",
      "instructions: ~/repo/b.md imports ~/repo/a.md, which imports it back (a cycle): each is read once",
      `instructions: ~/repo/CLAUDE.md imports ${path.join(outside, "secret.md")}, outside the repository and your home: not read`,
    ]);
  });

  it("follows at most 5 imports deep", () => {
    const { repo, env } = makeWorld();
    put(path.join(repo, "CLAUDE.md"), "LEVEL 0\n@l1.md\n");
    for (let i = 1; i <= 6; i++) put(path.join(repo, `l${i}.md`), `LEVEL ${i}\n@l${i + 1}.md\n`);
    const got = instructionsFor(repo, env);
    for (let i = 0; i <= 5; i++) expect(got.text).toContain(`LEVEL ${i}\n`);
    expect(got.text).not.toContain("LEVEL 6");
    expect(got.warnings).toEqual([
      "instructions: ~/repo/l5.md imports ~/repo/l6.md, more than 5 imports deep: not read",
    ]);
  });

  it("stays within the 32 KiB budget", () => {
    const { repo, env } = makeWorld();
    put(path.join(repo, "CLAUDE.md"), "@big.md\n");
    put(path.join(repo, "big.md"), "x".repeat(40_000));
    const { text } = instructionsFor(repo, env);
    expect(Buffer.byteLength(text, "utf8")).toBeLessThanOrEqual(32 * 1024);
    expect(text).toMatch(/\[instructions cut by warren/);
  });

  it("a changed imported file is noticed by the background check", async () => {
    const { repo, env } = makeWorld();
    put(path.join(repo, "CLAUDE.md"), "@notes.md\n");
    const notes = put(path.join(repo, "notes.md"), "OLD NOTE\n");
    expect(instructionsFor(repo, env).text).toContain("OLD NOTE");
    writeFileSync(notes, "NEW NOTE, LONGER\n");
    const { utimesSync } = await import("node:fs");
    utimesSync(notes, new Date(), new Date(Date.now() + 5000));
    instructionsFor(repo, env, 0);
    await instructionsRechecked(repo, env);
    expect(instructionsFor(repo, env).text).toContain("NEW NOTE");
  });
});

describe("an imported file is an instruction file", () => {
  it("is recorded at start, and an agent's change to it waits for the person", () => {
    const { repo, env } = makeWorld();
    put(path.join(repo, "CLAUDE.md"), "@docs/notes.md\n");
    const notes = put(path.join(repo, "docs", "notes.md"), "ACCEPTED NOTE\n");
    const files = instructionCandidates(repo, env);
    expect(files).toContain(notes);
    acceptAtStart([repo], files, env);
    clearInstructionsCache();
    writeFileSync(notes, "AGENT WROTE THIS\n");
    const got = instructionsFor(repo, env);
    expect(got.text).toContain("ACCEPTED NOTE");
    expect(got.text).not.toContain("AGENT WROTE THIS");
    expect(got.changes.map((c) => c.file)).toEqual([notes]);
  });

  it("a write_file or edit_file to it is asked like one to AGENTS.md", () => {
    const { repo, env } = makeWorld();
    put(path.join(repo, "CLAUDE.md"), "@docs/notes.md\n");
    const notes = put(path.join(repo, "docs", "notes.md"), "NOTE\n");
    put(path.join(repo, "docs", "other.md"), "OTHER\n");
    expect(guardedWriteTarget("write_file", { path: "docs/notes.md" }, repo, env)).toBe(notes);
    expect(guardedWriteTarget("edit_file", { path: "docs/notes.md" }, repo, env)).toBe(notes);
    expect(guardedWriteTarget("write_file", { path: "docs/other.md" }, repo, env)).toBeUndefined();
  });
});

describe("imports end to end", () => {
  const database = useTestDatabase();
  let fake: FakeModel;
  beforeEach(async () => {
    fake = await startFakeModel();
  });
  afterEach(async () => {
    await fake.close();
  });

  it("warren -p: the model's system prompt carries the person's files and the imports, once each", async () => {
    fake.script([{ agent: "root", times: 1, reply: { text: "Done." } }]);
    const runEnv = warrenEnv({ databaseUrl: database().url, modelUrl: fake.baseURL, extra: {} });
    const home = runEnv.HOME!;
    const repo = path.join(home, "project");
    mkdirSync(path.join(repo, ".git"), { recursive: true });
    put(path.join(home, ".claude", "CLAUDE.md"), "CLAUDE USER RULE\n");
    put(path.join(home, ".codex", "AGENTS.md"), "CODEX USER RULE\n");
    put(path.join(repo, "AGENTS.md"), "PROJECT AGENTS RULE\n");
    put(path.join(repo, "CLAUDE.md"), "@AGENTS.md\n@docs/notes.md\n`@not/an/import.md`\n");
    put(path.join(repo, "docs", "notes.md"), "IMPORTED NOTE RULE\n");
    const run = await runWarren(["-p", "Go.", "--timeout", "60"], runEnv, repo);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const system = requestsOf(fake, "root")[0]!.systemPrompt!;
    for (const rule of [
      "CLAUDE USER RULE",
      "CODEX USER RULE",
      "PROJECT AGENTS RULE",
      "IMPORTED NOTE RULE",
    ]) {
      expect(count(system, rule), rule).toBe(1);
    }
    expect(system).toContain(`Instructions from ${path.join(repo, "docs", "notes.md")}:`);
  });
});
