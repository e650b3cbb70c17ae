// scripts/check-docs.js (run by `npm run check`): a README whose links, `npm run` scripts or
// `warren` subcommands do not exist fails with one line each; the repository's own docs pass.
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const script = path.join(repo, "scripts/check-docs.js");

function checkDocs(root?: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, ...(root ? ["--root", root] : [])], (error, _out, stderr) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stderr }),
    );
  });
}

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "warren-docs-"));
  await mkdir(path.join(root, "src/cli"), { recursive: true });
  await mkdir(path.join(root, "docs"));
  await copyFile(path.join(repo, "package.json"), path.join(root, "package.json"));
  await copyFile(path.join(repo, "src/cli/commands.ts"), path.join(root, "src/cli/commands.ts"));
  await writeFile(path.join(root, "docs/configuration.md"), "# Configuration\n\n## The keys\n");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const GOOD = [
  "# warren",
  "",
  "[keys](docs/configuration.md#the-keys), [top](#warren), [web](https://example.com)",
  "",
  "```sh",
  "npm install && npm start && npm test && npm run check",
  "warren ls --json",
  "./bin/warren -p PROMPT",
  "```",
  "",
  "Also `warren send AGENT MESSAGE`, `warren help send` and `warren db status`.",
  "",
].join("\n");

describe("scripts/check-docs.js", () => {
  it("passes the repository's own README and docs", async () => {
    expect(await checkDocs()).toEqual({ code: 0, stderr: "" });
  });

  it("passes a README whose links, scripts and subcommands all exist", async () => {
    await writeFile(path.join(root, "README.md"), GOOD);
    expect(await checkDocs(root)).toEqual({ code: 0, stderr: "" });
  });

  it("fails a README with a missing file, heading, npm script or warren subcommand", async () => {
    const bad = GOOD.replace("docs/configuration.md#the-keys", "docs/missing.md")
      .replace("[top](#warren)", "[top](#warren) [gone](docs/configuration.md#no-such-heading)")
      .replace("npm run check", "npm run lint")
      .replace("warren ls --json", "warren list --json");
    await writeFile(path.join(root, "README.md"), bad);
    const run = await checkDocs(root);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split("\n")).toEqual([
      "check-docs: README.md:3: link to a missing file: docs/missing.md",
      "check-docs: README.md:3: link to a missing heading: docs/configuration.md#no-such-heading",
      "check-docs: README.md:6: `npm run lint` is not a script of package.json",
      "check-docs: README.md:7: `warren list` is not a subcommand (src/cli/commands.ts)",
    ]);
  });

  it("reads the subcommands from src/cli/commands.ts, not a list of its own", async () => {
    await writeFile(path.join(root, "README.md"), GOOD.replace("warren ls", "warren frob"));
    expect((await checkDocs(root)).code).toBe(1);
    await writeFile(
      path.join(root, "src/cli/commands.ts"),
      'export const COMMANDS = [\n  {\n    name: "frob",\n  },\n  { name: "send" },\n  {\n    name: "db",\n  },\n];\n',
    );
    expect(await checkDocs(root)).toEqual({ code: 0, stderr: "" });
  });

  it("checks links and named files in docs/*.md too", async () => {
    await writeFile(path.join(root, "README.md"), GOOD);
    await writeFile(
      path.join(root, "docs/more.md"),
      "# More\n\n[back](../README.md#nowhere)\n\n`src/cli/commands.ts`, `test/gone.test.ts`, `test/ui/*`\n",
    );
    const run = await checkDocs(root);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      "check-docs: docs/more.md:3: link to a missing heading: ../README.md#nowhere\n" +
        "check-docs: docs/more.md:5: `test/gone.test.ts` does not exist\n",
    );
  });
});
