// edit_file tool: one exact, unique replacement; not-found and ambiguous matches are explained.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { editFileTool } from "../../src/tools/edit-file.js";
import type { ToolOutcome } from "../../src/tools/tool.js";

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "warren-edit-"));
  file = path.join(dir, "f.ts");
  await writeFile(file, "const a = 1;\nconst b = 2;\nconst a2 = 1;\n");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function run(args: unknown): Promise<ToolOutcome> {
  return editFileTool.run(args, { cwd: dir, signal: new AbortController().signal });
}

function expectInvalid(outcome: ToolOutcome, message: RegExp): void {
  expect(outcome).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
  if (!outcome.ok) expect(outcome.error.message).toMatch(message);
}

describe("edit_file", () => {
  it("replaces a unique match", async () => {
    expect(await run({ path: "f.ts", old_string: "b = 2", new_string: "b = 3" })).toEqual({
      ok: true,
      value: { path: "f.ts", replacements: 1 },
    });
    expect(await readFile(file, "utf8")).toBe("const a = 1;\nconst b = 3;\nconst a2 = 1;\n");
  });

  it("keeps $-patterns in new_string literal and can delete text", async () => {
    await run({ path: "f.ts", old_string: "const b = 2;\n", new_string: "$&$1$$" });
    expect(await readFile(file, "utf8")).toBe("const a = 1;\n$&$1$$const a2 = 1;\n");
    await run({ path: "f.ts", old_string: "$&$1$$", new_string: "" });
    expect(await readFile(file, "utf8")).toBe("const a = 1;\nconst a2 = 1;\n");
  });

  it("refuses a missing or ambiguous old_string and leaves the file alone", async () => {
    expectInvalid(await run({ path: "f.ts", old_string: "c = 3", new_string: "x" }), /not found/);
    expectInvalid(
      await run({ path: "f.ts", old_string: " = 1;", new_string: " = 9;" }),
      /matches 2 times.*add context/,
    );
    expect(await readFile(file, "utf8")).toBe("const a = 1;\nconst b = 2;\nconst a2 = 1;\n");
  });

  it("counts overlapping matches as ambiguous", async () => {
    await writeFile(file, "aaa");
    expectInvalid(await run({ path: "f.ts", old_string: "aa", new_string: "b" }), /2 times/);
  });

  it("explains a missing file, a binary file and a no-op edit", async () => {
    expectInvalid(
      await run({ path: "nope.ts", old_string: "a", new_string: "b" }),
      /no such file or directory: nope\.ts/,
    );
    await writeFile(path.join(dir, "bin"), Buffer.from([0x61, 0x00]));
    expectInvalid(await run({ path: "bin", old_string: "a", new_string: "b" }), /binary/);
    expectInvalid(await run({ path: "f.ts", old_string: "a", new_string: "a" }), /identical/);
  });

  it.each([
    ["null", null],
    ["a number", 3],
    ["an array", ["f.ts"]],
    ["missing path", { old_string: "a", new_string: "b" }],
    ["missing old_string", { path: "f.ts", new_string: "b" }],
    ["missing new_string", { path: "f.ts", old_string: "a" }],
    ["empty old_string", { path: "f.ts", old_string: "", new_string: "b" }],
    ["wrong-typed path", { path: 1, old_string: "a", new_string: "b" }],
    ["wrong-typed old_string", { path: "f.ts", old_string: 1, new_string: "b" }],
    ["wrong-typed new_string", { path: "f.ts", old_string: "a", new_string: false }],
    ["unknown argument", { path: "f.ts", old_string: "a", new_string: "b", all: true }],
  ])("rejects %s with INVALID_ARGS", async (_label, args) => {
    expectInvalid(await run(args), /./);
  });
});
