// glob tool and its matcher: pattern syntax, sorted paths relative to cwd, skipped directories.
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { globTool, globToRegExp } from "../../src/tools/glob.js";
import type { ToolOutcome } from "../../src/tools/tool.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "warren-glob-"));
  const files = [
    "README.md",
    "package.json",
    "src/index.ts",
    "src/tools/bash.ts",
    "src/tools/bash.test.tsx",
    "src/ui/view.tsx",
    "node_modules/dep/index.ts",
    ".git/config.ts",
    "docs/.hidden.ts",
  ];
  for (const file of files) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), "");
  }
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function run(args: unknown): Promise<ToolOutcome> {
  return globTool.run(args, { cwd: dir, signal: new AbortController().signal });
}

async function files(args: unknown): Promise<unknown> {
  const outcome = await run(args);
  if (!outcome.ok) throw new Error(outcome.error.message);
  return (outcome.value as { files: string[] }).files;
}

describe("globToRegExp", () => {
  it.each([
    ["*.ts", "a.ts", true],
    ["*.ts", "src/a.ts", false],
    ["**/*.ts", "a.ts", true],
    ["**/*.ts", "src/deep/a.ts", true],
    ["src/**", "src/a/b", true],
    ["src/**/x.ts", "src/x.ts", true],
    ["src/**/x.ts", "srcx.ts", false],
    ["a?.ts", "ab.ts", true],
    ["a?.ts", "a/.ts", false],
    ["*.{ts,tsx}", "a.tsx", true],
    ["*.{ts,tsx}", "a.js", false],
    ["{src,lib/{a,b}}/*.ts", "lib/b/x.ts", true],
    ["[abc].ts", "b.ts", true],
    ["[!abc].ts", "b.ts", false],
    ["a.b(c)+.ts", "a.b(c)+.ts", true],
    ["a.ts", "abts", false],
    ["{unclosed", "{unclosed", true],
  ])("%s against %s → %s", (glob, candidate, expected) => {
    expect(globToRegExp(glob).test(candidate)).toBe(expected);
  });
});

describe("glob", () => {
  it("matches recursively with ** and skips node_modules and .git", async () => {
    expect(await files({ pattern: "**/*.ts" })).toEqual([
      "docs/.hidden.ts",
      "src/index.ts",
      "src/tools/bash.ts",
    ]);
  });

  it("keeps * within one directory", async () => {
    expect(await files({ pattern: "*" })).toEqual(["README.md", "package.json"]);
    expect(await files({ pattern: "src/*.ts" })).toEqual(["src/index.ts"]);
  });

  it("supports braces and searches below path, returning paths relative to cwd", async () => {
    expect(await files({ pattern: "**/*.{ts,tsx}", path: "src/tools" })).toEqual([
      "src/tools/bash.test.tsx",
      "src/tools/bash.ts",
    ]);
    expect(await files({ pattern: path.join(dir, "src/ui/*.tsx") })).toEqual(["src/ui/view.tsx"]);
  });

  it("follows symlinked files but not symlinked directories", async () => {
    await symlink(path.join(dir, "src"), path.join(dir, "loop"));
    await symlink(path.join(dir, "README.md"), path.join(dir, "link.md"));
    expect(await files({ pattern: "**/*.md" })).toEqual(["README.md", "link.md"]);
  });

  it("returns an empty list when nothing matches", async () => {
    expect(await files({ pattern: "**/*.rs" })).toEqual([]);
    expect(await files({ pattern: "missing/**/*.ts" })).toEqual([]);
  });

  it("caps the list at 1000 and says so", async () => {
    await mkdir(path.join(dir, "many"));
    for (let i = 0; i < 1005; i++) await writeFile(path.join(dir, "many", `f${i}.txt`), "");
    const outcome = await run({ pattern: "many/*.txt" });
    expect(outcome).toMatchObject({ ok: true, value: { truncated: true } });
    if (outcome.ok) expect((outcome.value as { files: string[] }).files).toHaveLength(1000);
  });

  it("explains a path that is missing or not a directory", async () => {
    expect(await run({ pattern: "*", path: "nope" })).toMatchObject({
      ok: false,
      error: { code: "INVALID_ARGS", message: "no such file or directory: nope" },
    });
    expect(await run({ pattern: "*", path: "README.md" })).toMatchObject({
      ok: false,
      error: { code: "INVALID_ARGS", message: "README.md is not a directory" },
    });
  });

  it.each([
    ["null", null],
    ["a string", "*.ts"],
    ["an array", ["*.ts"]],
    ["missing pattern", {}],
    ["empty pattern", { pattern: "" }],
    ["wrong-typed pattern", { pattern: 1 }],
    ["wrong-typed path", { pattern: "*", path: 1 }],
    ["unknown argument", { pattern: "*", recursive: true }],
  ])("rejects %s with INVALID_ARGS", async (_label, args) => {
    expect(await run(args)).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
  });
});
