// The file tools stay in the agent's working directory (SPEC §3): every escape an outside audit
// found — "../", absolute paths, a symlink to /etc (file and directory), a symlinked parent of a
// file to be written, globs rooted outside, grep over a path outside — is NOT_ALLOWED and touches
// nothing, unless the config says `file_access: "any"`; and a glob that makes a backtracking
// matcher run for minutes returns at once. Writes only ever aim at a temporary directory.
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileAccessFor, loadConfig } from "../../src/config/config.js";
import { editFileTool } from "../../src/tools/edit-file.js";
import { globTool } from "../../src/tools/glob.js";
import { grepTool } from "../../src/tools/grep.js";
import type { FileToolContext } from "../../src/tools/paths.js";
import { readFileTool } from "../../src/tools/read-file.js";
import type { Tool, ToolOutcome } from "../../src/tools/tool.js";
import { writeFileTool } from "../../src/tools/write-file.js";

let base: string;
let cwd: string;
let outside: string;
const hostname = readFileSync("/etc/hostname", "utf8");

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), "warren-escape-"));
  cwd = path.join(base, "cwd");
  outside = path.join(base, "outside");
  await mkdir(cwd);
  await mkdir(outside);
  await writeFile(path.join(cwd, "inside.txt"), "inside\n");
  await writeFile(path.join(base, "outside.txt"), "original\n");
  await writeFile(path.join(outside, "secret.txt"), "secret\n");
  await symlink("/etc/hostname", path.join(cwd, "hostname"));
  await symlink("/etc", path.join(cwd, "etc"));
  await symlink(outside, path.join(cwd, "out"));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

/** The tool context an agent gets from a config file, as the runtime builds it. */
async function contextFrom(config: object, profile?: string): Promise<FileToolContext> {
  const file = path.join(base, `config-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, JSON.stringify(config));
  const fileAccess = fileAccessFor(loadConfig({ WARREN_CONFIG: file }), profile);
  return { cwd, signal: new AbortController().signal, fileAccess };
}

let confined: FileToolContext;
let unconfined: FileToolContext;
beforeAll(async () => {
  confined = await contextFrom({});
  unconfined = await contextFrom({ profiles: { ops: { file_access: "any" } } }, "ops");
});

function call<C extends FileToolContext>(tool: Tool<C>, args: unknown, ctx: C) {
  return tool.run(args, ctx);
}

function expectRefused(outcome: ToolOutcome): void {
  expect(outcome).toMatchObject({ ok: false, error: { code: "NOT_ALLOWED" } });
  if (!outcome.ok) {
    expect(outcome.error.message).toMatch(/outside your working directory/);
    expect(outcome.error.message).not.toContain("\n");
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

describe("with file_access cwd (the default)", () => {
  it("refuses ../ for every file tool and changes nothing", async () => {
    expectRefused(await call(writeFileTool, { path: "../escaped.txt", content: "x" }, confined));
    expectRefused(await call(readFileTool, { path: "../outside.txt" }, confined));
    expectRefused(
      await call(
        editFileTool,
        { path: "../outside.txt", old_string: "original", new_string: "changed" },
        confined,
      ),
    );
    expect(await exists(path.join(base, "escaped.txt"))).toBe(false);
    expect(await readFile(path.join(base, "outside.txt"), "utf8")).toBe("original\n");
  });

  it("refuses absolute paths outside cwd", async () => {
    expectRefused(await call(readFileTool, { path: "/etc/hostname" }, confined));
    expectRefused(
      await call(writeFileTool, { path: path.join(outside, "abs.txt"), content: "x" }, confined),
    );
    expect(await exists(path.join(outside, "abs.txt"))).toBe(false);
  });

  it("refuses a symlink to a file in /etc and one to /etc itself", async () => {
    expectRefused(await call(readFileTool, { path: "hostname" }, confined));
    expectRefused(await call(readFileTool, { path: "etc/hostname" }, confined));
    expectRefused(
      // Edits aim at the temporary directory, never at /etc, should the protection be missing.
      await call(
        editFileTool,
        { path: "out/secret.txt", old_string: "secret", new_string: "changed" },
        confined,
      ),
    );
    expect(await readFile(path.join(outside, "secret.txt"), "utf8")).toBe("secret\n");
    expectRefused(await call(globTool, { pattern: "etc/host*" }, confined));
    expectRefused(await call(globTool, { pattern: "*", path: "etc" }, confined));
    expectRefused(await call(grepTool, { pattern: ".", path: "etc" }, confined));
    expectRefused(await call(grepTool, { pattern: ".", path: "hostname" }, confined));
  });

  it("refuses to write below a symlinked directory that leads outside", async () => {
    expectRefused(await call(writeFileTool, { path: "out/new.txt", content: "x" }, confined));
    expectRefused(await call(writeFileTool, { path: "out/deep/new.txt", content: "x" }, confined));
    expect(await exists(path.join(outside, "new.txt"))).toBe(false);
    expect(await exists(path.join(outside, "deep"))).toBe(false);
  });

  it("refuses globs rooted outside cwd and lists nothing through symlinks", async () => {
    expectRefused(await call(globTool, { pattern: "/etc/host*" }, confined));
    expectRefused(await call(globTool, { pattern: "../*" }, confined));
    expectRefused(await call(globTool, { pattern: "*", path: "/etc" }, confined));
    expect(await call(globTool, { pattern: "**/*" }, confined)).toEqual({
      ok: true,
      value: { files: ["inside.txt"] },
    });
  });

  it("refuses grep over a path outside and finds nothing through symlinks", async () => {
    expectRefused(await call(grepTool, { pattern: "secret", path: outside }, confined));
    expectRefused(await call(grepTool, { pattern: "original", path: ".." }, confined));
    expectRefused(await call(grepTool, { pattern: ".", path: "/etc" }, confined));
    expect(await call(grepTool, { pattern: "." }, confined)).toEqual({
      ok: true,
      value: { matches: [{ file: "inside.txt", line: 1, text: "inside" }] },
    });
  });

  it("still serves files inside cwd, by relative or absolute path", async () => {
    expect(
      await call(readFileTool, { path: path.join(cwd, "inside.txt") }, confined),
    ).toMatchObject({ ok: true, value: { content: "inside\n" } });
    expect(
      await call(writeFileTool, { path: "sub/new.txt", content: "n" }, confined),
    ).toMatchObject({ ok: true, value: { path: "sub/new.txt" } });
    await rm(path.join(cwd, "sub"), { recursive: true });
  });
});

describe('with file_access "any" (here from a profile)', () => {
  it("reads, writes and edits outside cwd", async () => {
    expect(await call(readFileTool, { path: "/etc/hostname" }, unconfined)).toMatchObject({
      ok: true,
      value: { content: hostname },
    });
    expect(await call(readFileTool, { path: "etc/hostname" }, unconfined)).toMatchObject({
      ok: true,
      value: { content: hostname },
    });
    const written = await call(writeFileTool, { path: "out/new.txt", content: "x" }, unconfined);
    expect(written).toMatchObject({ ok: true });
    expect(await readFile(path.join(outside, "new.txt"), "utf8")).toBe("x");
    const edited = await call(
      editFileTool,
      { path: "../outside.txt", old_string: "original", new_string: "changed" },
      unconfined,
    );
    expect(edited).toMatchObject({ ok: true });
    expect(await readFile(path.join(base, "outside.txt"), "utf8")).toBe("changed\n");
  });

  it("globs and greps outside cwd", async () => {
    const etc = await call(globTool, { pattern: "/etc/host*" }, unconfined);
    expect(etc).toMatchObject({ ok: true });
    if (etc.ok) expect((etc.value as { files: string[] }).files).toContain("/etc/hostname");
    const up = await call(globTool, { pattern: "../*.txt" }, unconfined);
    expect(up).toMatchObject({ ok: true });
    if (up.ok)
      expect((up.value as { files: string[] }).files).toContain(path.join(base, "outside.txt"));
    expect(await call(grepTool, { pattern: "secret", path: outside }, unconfined)).toMatchObject({
      ok: true,
      value: { matches: [{ file: path.join(outside, "secret.txt"), line: 1, text: "secret" }] },
    });
  });
});

describe("a pathological glob", () => {
  // As a backtracking RegExp this pattern took over 70 s for a handful of names, on the thread
  // that runs the agent's turn; here the test's own timeout is the bound.
  const pattern = `${"{*,?}".repeat(12)}Z`;

  it("returns at once from glob and from grep's glob filter", async () => {
    for (let i = 0; i < 5; i++) {
      await writeFile(path.join(cwd, `${"a".repeat(24)}${i}.txt`), "a\n");
    }
    expect(await call(globTool, { pattern }, confined)).toEqual({ ok: true, value: { files: [] } });
    expect(await call(grepTool, { pattern: "a", glob: pattern }, confined)).toEqual({
      ok: true,
      value: { matches: [] },
    });
  }, 5_000);
});
