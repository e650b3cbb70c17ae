// grep tool: regex matches with file and line, glob and case options, skipped files and caps.
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { grepLimits, grepTool } from "../../src/tools/grep.js";
import type { ToolOutcome } from "../../src/tools/tool.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "warren-grep-"));
  const files: Record<string, string> = {
    "a.ts": "import x from 'y';\nconst Foo = 1;\r\nconst foo = 2;\n",
    "src/b.ts": "export function foo() {}\n",
    "src/c.md": "foo in docs\n",
    "node_modules/dep/index.ts": "const foo = 0;\n",
    ".git/HEAD": "foo\n",
  };
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
  await writeFile(path.join(dir, "src/bin.ts"), Buffer.from("foo\0bar"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function run(args: unknown): Promise<ToolOutcome> {
  return grepTool.run(args, { cwd: dir, signal: new AbortController().signal });
}

describe("grep", () => {
  it("finds matching lines with file and 1-based line, skipping binaries, node_modules, .git", async () => {
    expect(await run({ pattern: "fo+\\b" })).toEqual({
      ok: true,
      value: {
        matches: [
          { file: "a.ts", line: 3, text: "const foo = 2;" },
          { file: "src/b.ts", line: 1, text: "export function foo() {}" },
          { file: "src/c.md", line: 1, text: "foo in docs" },
        ],
      },
    });
  });

  it("ignores case on request and strips CR from CRLF lines", async () => {
    expect(await run({ pattern: "^const foo = 1;$", ignore_case: true })).toMatchObject({
      value: { matches: [{ file: "a.ts", line: 2, text: "const Foo = 1;" }] },
    });
  });

  it("filters by a file-name glob, or a path glob when it contains /", async () => {
    const byName = await run({ pattern: "foo", glob: "*.md" });
    expect(byName).toMatchObject({ value: { matches: [{ file: "src/c.md" }] } });
    const byPath = await run({ pattern: "foo", glob: "src/*.{ts,js}" });
    expect(byPath).toMatchObject({ value: { matches: [{ file: "src/b.ts" }] } });
  });

  it("searches a single file or a subdirectory given as path", async () => {
    expect(await run({ pattern: "foo", path: "src/b.ts" })).toMatchObject({
      value: { matches: [{ file: "src/b.ts", line: 1 }] },
    });
    const sub = await run({ pattern: "foo", path: path.join(dir, "src") });
    expect(sub).toMatchObject({ value: { matches: [{ file: "src/b.ts" }, { file: "src/c.md" }] } });
  });

  it("returns no matches as an empty list", async () => {
    expect(await run({ pattern: "nothing-here" })).toEqual({ ok: true, value: { matches: [] } });
  });

  it("caps matches at 500 and clips long lines", async () => {
    await writeFile(path.join(dir, "many.txt"), "hit\n".repeat(600));
    await writeFile(path.join(dir, "wide.txt"), `hit${"x".repeat(1000)}\n`);
    const many = await run({ pattern: "hit", path: "many.txt" });
    expect(many).toMatchObject({ ok: true, value: { truncated: true } });
    if (many.ok) expect((many.value as { matches: unknown[] }).matches).toHaveLength(500);
    const wide = await run({ pattern: "hit", path: "wide.txt" });
    if (wide.ok) {
      const [match] = (wide.value as { matches: { text: string }[] }).matches;
      expect(match?.text).toBe(`hit${"x".repeat(497)}…`);
    }
  });

  it("explains an invalid regex and a missing path", async () => {
    const bad = await run({ pattern: "(unclosed" });
    expect(bad).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
    if (!bad.ok) expect(bad.error.message).toMatch(/invalid regular expression/);
    expect(await run({ pattern: "x", path: "nope" })).toMatchObject({
      ok: false,
      error: { code: "INVALID_ARGS", message: "no such file or directory: nope" },
    });
  });

  it.each([
    ["null", null],
    ["a string", "foo"],
    ["an array", ["foo"]],
    ["missing pattern", {}],
    ["empty pattern", { pattern: "" }],
    ["wrong-typed pattern", { pattern: /foo/ }],
    ["wrong-typed path", { pattern: "foo", path: 3 }],
    ["wrong-typed glob", { pattern: "foo", glob: true }],
    ["wrong-typed ignore_case", { pattern: "foo", ignore_case: "yes" }],
    ["unknown argument", { pattern: "foo", context: 2 }],
  ])("rejects %s with INVALID_ARGS", async (_label, args) => {
    expect(await run(args)).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
  });
});

describe("grep's glob filter and reach", () => {
  it("answers an invalid glob with INVALID_ARGS, never INTERNAL", async () => {
    for (const glob of ["[z-a]*", "{*.ts", "*.ts}"]) {
      expect(await run({ pattern: "foo", glob })).toMatchObject({
        ok: false,
        error: { code: "INVALID_ARGS", message: expect.stringMatching(/^invalid glob/) },
      });
    }
  });

  it("filters with a pathological glob at once (it runs before the time-limited matcher)", async () => {
    for (let i = 0; i < 20; i++) await writeFile(path.join(dir, `${"a".repeat(30)}${i}`), "foo\n");
    const outcome = await run({ pattern: "foo", glob: `${"{*,?}".repeat(12)}Z` });
    expect(outcome).toEqual({ ok: true, value: { matches: [] } });
  }, 5_000);

  it("neither searches nor lists files outside cwd", async () => {
    const outside = await mkdtemp(path.join(tmpdir(), "warren-grep-outside-"));
    try {
      await writeFile(path.join(outside, "secret.ts"), "const foo = 'secret';\n");
      await symlink(path.join(outside, "secret.ts"), path.join(dir, "secret.ts"));
      await symlink(outside, path.join(dir, "out"));
      const all = await run({ pattern: "secret" });
      expect(all).toEqual({ ok: true, value: { matches: [] } });
      for (const where of ["..", outside, "out", "secret.ts"]) {
        expect(await run({ pattern: "foo", path: where })).toMatchObject({
          ok: false,
          error: { code: "NOT_ALLOWED" },
        });
      }
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});

describe("grep with a catastrophic pattern", () => {
  it("is stopped at its time limit and never blocks the thread meanwhile", async () => {
    const saved = grepLimits.timeMs;
    grepLimits.timeMs = 1_500;
    try {
      // (a+)+$ against many a's and a mismatch backtracks exponentially (minutes at 34).
      await writeFile(path.join(dir, "evil.txt"), `${"a".repeat(34)}!\n`);
      const order: string[] = [];
      const search = run({ pattern: "(a+)+$", path: "evil.txt" }).then((outcome) => {
        order.push("grep");
        return outcome;
      });
      await new Promise((resolve) => setTimeout(resolve, 50)).then(() => order.push("timer"));
      const outcome = await search;
      expect(order).toEqual(["timer", "grep"]);
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) {
        expect(outcome.error.code).toBe("LIMIT_EXCEEDED");
        expect(outcome.error.message).toMatch(/took longer than 1.5 s/);
      }
    } finally {
      grepLimits.timeMs = saved;
    }
  });
});
