// write_file tool: creates and overwrites files, makes parent directories, rejects bad input.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolOutcome } from "../../src/tools/tool.js";
import { writeFileTool } from "../../src/tools/write-file.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "warren-write-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function run(args: unknown): Promise<ToolOutcome> {
  return writeFileTool.run(args, { cwd: dir, signal: new AbortController().signal });
}

describe("write_file", () => {
  it("creates parent directories and reports the bytes written", async () => {
    expect(await run({ path: "a/b/c.txt", content: "héllo\n" })).toEqual({
      ok: true,
      value: { path: "a/b/c.txt", bytes: 7 },
    });
    expect(await readFile(path.join(dir, "a/b/c.txt"), "utf8")).toBe("héllo\n");
  });

  it("overwrites an existing file and writes empty content", async () => {
    await writeFile(path.join(dir, "x.txt"), "old content");
    expect(await run({ path: path.join(dir, "x.txt"), content: "" })).toMatchObject({
      value: { path: "x.txt", bytes: 0 },
    });
    expect(await readFile(path.join(dir, "x.txt"), "utf8")).toBe("");
  });

  it("refuses to write over a directory or below a file", async () => {
    await mkdir(path.join(dir, "d"));
    expect(await run({ path: "d", content: "x" })).toMatchObject({
      ok: false,
      error: { code: "INVALID_ARGS", message: "d is a directory, not a file" },
    });
    await writeFile(path.join(dir, "f"), "");
    expect(await run({ path: "f/g.txt", content: "x" })).toMatchObject({
      ok: false,
      error: { code: "INVALID_ARGS" },
    });
  });

  it.each([
    ["null", null],
    ["a string", "x"],
    ["an array", []],
    ["missing path", { content: "x" }],
    ["missing content", { path: "x.txt" }],
    ["null content", { path: "x.txt", content: null }],
    ["wrong-typed path", { path: ["x.txt"], content: "x" }],
    ["wrong-typed content", { path: "x.txt", content: 5 }],
    ["unknown argument", { path: "x.txt", content: "x", append: true }],
  ])("rejects %s with INVALID_ARGS", async (_label, args) => {
    expect(await run(args)).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
  });
});
