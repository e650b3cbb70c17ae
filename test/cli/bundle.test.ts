// What bin/warren runs is the bundle in dist/bundle (scripts/bundle.js): what it finds at run time
// beside the package (migrations, package.json) it finds from there, and opening the database
// does not load Node's fetch (pg's Cloudflare check would, patched out of the bundle).
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { useTestDatabase } from "../support/db.js";
import { BIN, warrenEnv } from "../support/warren.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
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
