// Ten processes starting at once against an empty database: the advisory lock makes them migrate once.
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { sql } from "drizzle-orm";
import { beforeAll, expect, it } from "vitest";
import { useTestDatabase } from "../support/db.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const compiledMigrate = path.join(root, "dist/src/db/migrate.js");
const database = useTestDatabase({ empty: true });

interface Exit {
  code: number;
  stderr: string;
}

function runNode(args: string[]): Promise<Exit> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: root, timeout: 60_000 }, (error, _stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stderr });
    });
  });
}

/** Child processes run the compiled code; build it when missing or older than the source. */
beforeAll(async () => {
  const mtime = (file: string) =>
    fs.stat(file).then(
      (s) => s.mtimeMs,
      () => 0,
    );
  if ((await mtime(compiledMigrate)) >= (await mtime(path.join(root, "src/db/migrate.ts")))) return;
  // Others' unfinished files may fail the type check; tsc still emits, so judge by the output file.
  await runNode([path.join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"]);
  expect(await mtime(compiledMigrate), `building ${compiledMigrate} failed`).toBeGreaterThan(0);
}, 180_000);

it("ten processes started at once migrate an empty database once, and all succeed", async () => {
  const { url, db } = database();
  const script =
    "const { migrate } = await import(process.argv[1]); await migrate(process.argv[2]);";
  const moduleUrl = pathToFileURL(compiledMigrate).href;
  const exits = await Promise.all(
    Array.from({ length: 10 }, () =>
      runNode(["--input-type=module", "-e", script, moduleUrl, url]),
    ),
  );
  expect(exits.map((exit) => exit.stderr)).toEqual(Array(10).fill(""));
  expect(exits.map((exit) => exit.code)).toEqual(Array(10).fill(0));

  const migrationFiles = (await fs.readdir(path.join(root, "migrations"))).filter((f) =>
    f.endsWith(".sql"),
  );
  const applied = await db.execute<{ count: string }>(
    sql`SELECT count(*) AS count FROM drizzle.__drizzle_migrations`,
  );
  expect(Number(applied.rows[0]?.count)).toBe(migrationFiles.length);

  const tables = await db.execute<{ name: string }>(
    sql`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
  );
  expect(tables.rows.map((row) => row.name)).toEqual(
    expect.arrayContaining(["agents", "events", "mail"]),
  );
});
