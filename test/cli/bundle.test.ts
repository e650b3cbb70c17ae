// What bin/warren runs is the bundle in dist/bundle (scripts/bundle.js): what it finds at run time
// beside the package (migrations, package.json) it finds from there, opening the database does
// not load Node's fetch (pg's Cloudflare check would, patched out of the bundle), and the TUI's
// first frame loads no package it does not need (one static import of the MCP SDK cost a third).
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { useTestDatabase } from "../support/db.js";
import { BIN, warrenEnv } from "../support/warren.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const bundle = path.join(root, "dist/bundle");
const database = useTestDatabase({ empty: true });

/** Runs bin/warren under `node nodeArgs…`, against the test database. */
function warren(args: string[], nodeArgs: string[] = []) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [...nodeArgs, BIN, ...args],
      { env: warrenEnv({ databaseUrl: database().url }), timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

it("runs from the bundle", async () => {
  const entry = (await fs.readFile(BIN, "utf8")).split("\n").find((l) => l.includes("import("));
  expect(entry).toContain("dist/bundle/warren.js");
});

it("migrates an empty database with the package's migrations", async () => {
  const run = await warren(["migrate"]);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  const files = (await fs.readdir(path.join(root, "migrations"))).filter((f) => f.endsWith(".sql"));
  const applied = await database().db.execute<{ count: string }>(
    sql`SELECT count(*) AS count FROM drizzle.__drizzle_migrations`,
  );
  expect(Number(applied.rows[0]?.count)).toBe(files.length);
});

it("prints the package's version", async () => {
  const pkg = JSON.parse(await fs.readFile(path.join(root, "package.json"), "utf8")) as {
    version: string;
  };
  const run = await warren(["--version"]);
  expect(run.stdout).toBe(`warren ${pkg.version}\n`);
});

it("opens the database without loading fetch", async () => {
  // Node loads its fetch (undici) on first use of fetch, Response and the like.
  const report = `process.on("exit", () => process.stderr.write("loaded: " + process.moduleLoadList.filter((m) => m.includes("undici")).join(",") + "\\n"));`;
  const run = await warren(
    ["ls"],
    ["--import", `data:text/javascript,${encodeURIComponent(report)}`],
  );
  expect(run.code).toBe(0);
  expect(run.stdout).toContain("no trees yet");
  expect(run.stderr).toBe("loaded: \n");
});

/** The chunks `file` imports statically, and those it imports dynamically (names only). */
async function importsOf(file: string) {
  const text = await fs.readFile(path.join(bundle, file), "utf8");
  const names = (pattern: RegExp) => [...text.matchAll(pattern)].map((m) => m[1]!);
  return {
    static: names(/^import\s[^;]*?from\s*"\.\/([^"]+)"/gm),
    dynamic: names(/import\("\.\/([^"]+)"\)/g),
  };
}

it("loads neither the MCP SDK nor the YAML parser before the TUI's first frame", async () => {
  // cli/start.ts loads the bus, the UI and failure wording before the frame; the worker pool,
  // `ls` (no terminal) and everything else load after it or elsewhere.
  const start = (await importsOf("warren.js")).dynamic.find((f) => f.startsWith("start-"))!;
  const beforeFrame = (await importsOf(start)).dynamic.filter((f) => /^(bus|app|failure)-/.test(f));
  expect(beforeFrame).toHaveLength(3);
  const chunks = new Set<string>();
  const visit = async (file: string): Promise<void> => {
    if (chunks.has(file)) return;
    chunks.add(file);
    for (const next of (await importsOf(file)).static) await visit(next);
  };
  for (const file of ["warren.js", start, ...beforeFrame]) await visit(file);
  const packages = new Set<string>();
  for (const file of chunks) {
    const map = JSON.parse(await fs.readFile(path.join(bundle, `${file}.map`), "utf8")) as {
      sources: string[];
    };
    for (const source of map.sources) {
      const name = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source)?.[1];
      if (name) packages.add(name);
    }
  }
  expect(packages).toContain("pg"); // the walk found the chunks that open the database
  expect([...packages].filter((p) => /^(@modelcontextprotocol|yaml|zod|ajv)/.test(p))).toEqual([]);
});
