// Applies the committed drizzle-kit migrations under an advisory lock, so concurrent starts migrate once.
import { fileURLToPath } from "node:url";
import path from "node:path";
import { drizzle } from "drizzle-orm/node-postgres";
import { migrate as drizzleMigrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";

/** Arbitrary but fixed: every warren process contends for the same lock. */
const MIGRATION_LOCK_KEY = 0x77617272; // "warr"

export function migrationsFolder(): string {
  // Compiled to dist/src/db or run from src/db: the folder sits at the package root either way.
  const here = path.dirname(fileURLToPath(import.meta.url));
  const up = here.includes(`${path.sep}dist${path.sep}`) ? "../../.." : "../..";
  return path.resolve(here, up, "migrations");
}

export async function migrate(connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString, application_name: "warren-migrate" });
  await client.connect();
  try {
    // Quiet the NOTICEs of "IF NOT EXISTS" statements.
    await client.query("SET client_min_messages = warning");
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    try {
      await drizzleMigrate(drizzle(client), { migrationsFolder: migrationsFolder() });
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await client.end();
  }
}
