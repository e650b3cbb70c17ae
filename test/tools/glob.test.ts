// glob tool and its matcher: pattern syntax, sorted paths relative to cwd, skipped directories,
// invalid and pathological patterns, and the walk staying inside cwd.
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { globTool } from "../../src/tools/glob.js";
import { compileGlob, MAX_GLOB_CHARS } from "../../src/tools/glob-match.js";
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

describe("compileGlob", () => {
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
    ["\\{unclosed", "{unclosed", true],
    ["*", ".hidden", true],
    ["a*b*c", "a/b/c", false],
    ["a*b*c", "axxbyyc", true],
    ["**", "a/b/c", true],
    ["a**b", "axb", true],
    ["a**b", "a/b", false],
    ["**/x/**/y", "a/x/b/c/y", true],
    ["[a-c][!0-9]", "b/", false],
    ["[]x]", "]", true],
    ["[a-]", "-", true],
    ["[\\]]", "]", true],
    ["{,a}b", "b", true],
    ["{**/,}*.ts", "deep/er/x.ts", true],
    ["é?.ts", "é😀.ts", true],
  ])("%s against %s → %s", (glob, candidate, expected) => {
    const matcher = compileGlob(glob);
    if (!matcher.ok) throw new Error(matcher.error.message);
    expect(matcher.value.test(candidate)).toBe(expected);
  });

  it.each([
    ["[z-a]*", /invalid glob "\[z-a\]\*": range "z-a" is out of order/],
    ["{unclosed", /"\{" without a closing "\}"/],
    ["a}", /"\}" without a matching "\{"/],
    ["{a,{b}", /"\{" without a closing "\}"/],
    ["[abc", /"\[" without a closing "\]"/],
    ["[!]", /"\[" without a closing "\]"/],
    ["x".repeat(MAX_GLOB_CHARS + 1), /glob is too long/],
  ])("refuses %s with one line", (glob, message) => {
    const matcher = compileGlob(glob);
    expect(matcher).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
    if (!matcher.ok) {
      expect(matcher.error.message).toMatch(message);
      expect(matcher.error.message).not.toContain("\n");
    }
  });

  it("matches a pattern that makes a backtracking matcher explode in linear time", () => {
    // As a RegExp, this took about 25 s per name at 10 repetitions (and grows exponentially).
    const matcher = compileGlob(`${"{*,?}".repeat(12)}Z`);
    if (!matcher.ok) throw new Error(matcher.error.message);
    for (let i = 0; i < 200; i++) {
      expect(matcher.value.test(`${"a".repeat(40)}${i}.txt`)).toBe(false);
    }
    expect(matcher.value.test(`${"a".repeat(40)}Z`)).toBe(true);
  }, 5_000);
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

describe("glob's patterns and reach", () => {
  it("answers an invalid pattern with INVALID_ARGS, never INTERNAL", async () => {
    for (const pattern of ["[z-a]*", "src/{a,b", "**/x}"]) {
      const outcome = await run({ pattern });
      expect(outcome).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
    }
  });

  it("returns at once for a pattern that would backtrack for minutes", async () => {
    for (let i = 0; i < 20; i++) await writeFile(path.join(dir, `${"a".repeat(30)}${i}`), "");
    expect(await files({ pattern: `${"{*,?}".repeat(12)}Z` })).toEqual([]);
  }, 5_000);

  it("does not return symlinks that lead outside cwd, unless file access is any", async () => {
    const outside = await mkdtemp(path.join(tmpdir(), "warren-glob-outside-"));
    try {
      await writeFile(path.join(outside, "secret.md"), "");
      await symlink(path.join(outside, "secret.md"), path.join(dir, "secret.md"));
      await symlink(outside, path.join(dir, "out"));
      expect(await files({ pattern: "**/*.md" })).toEqual(["README.md"]);
      const any = await globTool.run(
        { pattern: "**/*.md" },
        { cwd: dir, signal: new AbortController().signal, fileAccess: "any" },
      );
      expect(any).toMatchObject({ ok: true, value: { files: ["README.md", "secret.md"] } });
      expect(await run({ pattern: "out/*" })).toMatchObject({
        ok: false,
        error: { code: "NOT_ALLOWED" },
      });
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("refuses patterns and paths rooted outside cwd with NOT_ALLOWED", async () => {
    for (const args of [
      { pattern: "../*" },
      { pattern: "/etc/host*" },
      { pattern: "*", path: ".." },
      { pattern: "*", path: "/" },
    ]) {
      const outcome = await run(args);
      expect(outcome).toMatchObject({ ok: false, error: { code: "NOT_ALLOWED" } });
      if (!outcome.ok) expect(outcome.error.message).toMatch(/outside your working directory/);
    }
  });
});
