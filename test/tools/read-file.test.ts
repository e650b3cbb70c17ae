// read_file tool: exact content, paging by offset/limit, caps, and the failures a model can fix.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readFileTool } from "../../src/tools/read-file.js";
import type { ToolOutcome } from "../../src/tools/tool.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "warren-read-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function run(args: unknown): Promise<ToolOutcome> {
  return readFileTool.run(args, { cwd: dir, signal: new AbortController().signal });
}

function expectInvalid(outcome: ToolOutcome, message: RegExp): void {
  expect(outcome).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
  if (!outcome.ok) expect(outcome.error.message).toMatch(message);
}

const numbered = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}\n`).join("");

describe("read_file", () => {
  it("returns a file's exact text with its line count", async () => {
    await writeFile(path.join(dir, "a.txt"), "one\r\ntwo\nthree");
    expect(await run({ path: "a.txt" })).toEqual({
      ok: true,
      value: { path: "a.txt", content: "one\r\ntwo\nthree", total_lines: 3 },
    });
  });

  it("accepts absolute paths and nested relative ones", async () => {
    await mkdir(path.join(dir, "sub"));
    await writeFile(path.join(dir, "sub", "b.txt"), "b\n");
    expect(await run({ path: path.join(dir, "sub", "b.txt") })).toMatchObject({
      value: { path: "sub/b.txt", content: "b\n", total_lines: 1 },
    });
  });

  it("pages with offset and limit and says where to continue", async () => {
    await writeFile(path.join(dir, "n.txt"), numbered(1, 10));
    expect(await run({ path: "n.txt", offset: 3, limit: 2 })).toMatchObject({
      value: { content: numbered(3, 4), total_lines: 10, truncated: true, next_offset: 5 },
    });
    const tail = await run({ path: "n.txt", offset: 9 });
    expect(tail).toEqual({
      ok: true,
      value: { path: "n.txt", content: numbered(9, 10), total_lines: 10 },
    });
  });

  it("caps at 2000 lines", async () => {
    await writeFile(path.join(dir, "long.txt"), numbered(1, 2500));
    expect(await run({ path: "long.txt", limit: 5000 })).toMatchObject({
      value: { content: numbered(1, 2000), total_lines: 2500, truncated: true, next_offset: 2001 },
    });
  });

  it("caps at 100,000 characters, cutting a single huge line rather than returning nothing", async () => {
    await writeFile(path.join(dir, "wide.txt"), `${"x".repeat(60_000)}\n${"y".repeat(60_000)}\n`);
    expect(await run({ path: "wide.txt" })).toMatchObject({
      value: { content: `${"x".repeat(60_000)}\n`, truncated: true, next_offset: 2 },
    });
    await writeFile(path.join(dir, "huge.txt"), "z".repeat(150_000));
    const huge = await run({ path: "huge.txt" });
    expect(huge).toMatchObject({ value: { content: "z".repeat(100_000), truncated: true } });
  });

  it("reads an empty file", async () => {
    await writeFile(path.join(dir, "empty.txt"), "");
    expect(await run({ path: "empty.txt" })).toMatchObject({
      value: { content: "", total_lines: 0 },
    });
  });

  it("explains a missing file, a directory, a binary file and an offset past the end", async () => {
    expectInvalid(await run({ path: "nope.txt" }), /no such file or directory: nope\.txt/);
    await mkdir(path.join(dir, "d"));
    expectInvalid(await run({ path: "d" }), /is a directory/);
    await writeFile(path.join(dir, "bin"), Buffer.from([0x50, 0x00, 0x01]));
    expectInvalid(await run({ path: "bin" }), /binary file/);
    await writeFile(path.join(dir, "short.txt"), "a\nb\n");
    expectInvalid(await run({ path: "short.txt", offset: 5 }), /past the end.*2 lines/);
  });

  it.each([
    ["null", null],
    ["a string", "a.txt"],
    ["an array", [1]],
    ["missing path", {}],
    ["empty path", { path: "" }],
    ["wrong-typed path", { path: 7 }],
    ["wrong-typed offset", { path: "a.txt", offset: "2" }],
    ["fractional offset", { path: "a.txt", offset: 1.5 }],
    ["zero offset", { path: "a.txt", offset: 0 }],
    ["zero limit", { path: "a.txt", limit: 0 }],
    ["unknown argument", { path: "a.txt", lines: 3 }],
  ])("rejects %s with INVALID_ARGS", async (_label, args) => {
    await writeFile(path.join(dir, "a.txt"), "a\n");
    expectInvalid(await run(args), /./);
  });
});
