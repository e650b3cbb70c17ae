// file_access: the config setting (top level and per profile) and the path resolution behind it —
// symlinks, dangling links, loops and a symlinked cwd. The audit's escapes are in
// test/faults/file-escape.test.ts.
import { mkdir, mkdtemp, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, fileAccessFor, loadConfig } from "../../src/config/config.js";
import { allowedPath, realPathOf, type FileToolContext } from "../../src/tools/paths.js";
import { readFileTool } from "../../src/tools/read-file.js";
import { writeFileTool } from "../../src/tools/write-file.js";

let base: string;
let cwd: string;
let outside: string;
beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), "warren-access-"));
  cwd = path.join(base, "cwd");
  outside = path.join(base, "outside");
  await mkdir(cwd);
  await mkdir(outside);
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const context = (fileAccess?: "cwd" | "any", at = cwd): FileToolContext => ({
  cwd: at,
  signal: new AbortController().signal,
  fileAccess,
});

describe("file_access in the config", () => {
  async function configWith(content: unknown) {
    const file = path.join(base, "config.json");
    await writeFile(file, JSON.stringify(content));
    return loadConfig({ WARREN_CONFIG: file });
  }

  it('defaults to "cwd"; the agent\'s profile wins over the top level', async () => {
    expect((await configWith({})).fileAccess).toBe("cwd");
    const config = await configWith({
      file_access: "any",
      profiles: { boxed: { file_access: "cwd" }, plain: {} },
    });
    expect(fileAccessFor(config, null)).toBe("any");
    expect(fileAccessFor(config, "plain")).toBe("any");
    expect(fileAccessFor(config, "boxed")).toBe("cwd");
    expect(fileAccessFor(config, "unknown")).toBe("any");
    const open = await configWith({ profiles: { free: { file_access: "any" } } });
    expect(fileAccessFor(open, "free")).toBe("any");
    expect(fileAccessFor(open, undefined)).toBe("cwd");
  });

  it("refuses other values with one line naming the setting", async () => {
    await expect(configWith({ file_access: "all" })).rejects.toThrow(ConfigError);
    await expect(configWith({ file_access: "all" })).rejects.toThrow(
      'file_access must be "cwd" or "any", got "all"',
    );
    await expect(configWith({ profiles: { p: { file_access: true } } })).rejects.toThrow(
      "profiles.p.file_access must be",
    );
  });
});

describe("realPathOf and allowedPath", () => {
  it("resolves missing tails below symlinked directories and dangling links", async () => {
    await symlink(outside, path.join(cwd, "dir"));
    await symlink(path.join(outside, "new.txt"), path.join(cwd, "dangling"));
    const real = await realPathOf(outside);
    expect(await realPathOf(path.join(cwd, "dir", "a", "b.txt"))).toBe(path.join(real, "a/b.txt"));
    expect(await realPathOf(path.join(cwd, "dangling"))).toBe(path.join(real, "new.txt"));
    for (const given of ["dir/a/b.txt", "dangling"]) {
      expect(await allowedPath(context(), given)).toMatchObject({
        ok: false,
        error: { code: "NOT_ALLOWED", message: expect.stringMatching(/through a symlink/) },
      });
    }
  });

  it("writes nothing through a dangling link to a file outside", async () => {
    await symlink(path.join(outside, "new.txt"), path.join(cwd, "dangling"));
    const outcome = await writeFileTool.run({ path: "dangling", content: "x" }, context());
    expect(outcome).toMatchObject({ ok: false, error: { code: "NOT_ALLOWED" } });
    await expect(stat(path.join(outside, "new.txt"))).rejects.toThrow(/ENOENT/);
    await expect(readFileTool.run({ path: "dangling" }, context("any"))).resolves.toMatchObject({
      ok: false,
      error: { code: "INVALID_ARGS", message: "no such file or directory: dangling" },
    });
  });

  it("reports a symlink loop as INVALID_ARGS", async () => {
    await symlink(path.join(cwd, "b"), path.join(cwd, "a"));
    await symlink(path.join(cwd, "a"), path.join(cwd, "b"));
    expect(await writeFileTool.run({ path: "a", content: "x" }, context())).toMatchObject({
      ok: false,
      error: { code: "INVALID_ARGS", message: expect.stringMatching(/symbolic links/) },
    });
  });

  it("keeps working when the working directory is itself reached through a symlink", async () => {
    const alias = path.join(base, "alias");
    await symlink(cwd, alias);
    await writeFile(path.join(cwd, "in.txt"), "in\n");
    expect(await readFileTool.run({ path: "in.txt" }, context("cwd", alias))).toMatchObject({
      ok: true,
      value: { content: "in\n" },
    });
    expect(
      await readFileTool.run({ path: path.join(cwd, "in.txt") }, context("cwd", alias)),
    ).toMatchObject({ ok: true });
    expect(await readFileTool.run({ path: "../outside" }, context("cwd", alias))).toMatchObject({
      ok: false,
      error: { code: "NOT_ALLOWED" },
    });
  });

  it("treats an absent fileAccess as cwd and any as no confinement", async () => {
    await writeFile(path.join(outside, "x.txt"), "x\n");
    expect(await allowedPath(context(undefined), "../outside/x.txt")).toMatchObject({
      ok: false,
      error: {
        code: "NOT_ALLOWED",
        message: `"../outside/x.txt" is outside your working directory ${cwd}; the file tools only reach files inside it`,
      },
    });
    expect(await allowedPath(context("any"), "../outside/x.txt")).toEqual({
      ok: true,
      value: path.join(outside, "x.txt"),
    });
  });
});
