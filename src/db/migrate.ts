// Applies the committed drizzle-kit migrations under an advisory lock, so concurrent starts migrate
// once. A database that has every migration already is only read: one query, no lock.
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { warrenPackage } from "../package-root.js";

/** Arbitrary but fixed: every warren process contends for the same lock. */
const MIGRATION_LOCK_KEY = 0x77617272; // "warr"

export function migrationsFolder(): string {
  return path.join(warrenPackage().root, "migrations");
}

export async function migrate(connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString, application_name: "warren-migrate" });
  await client.connect();
  try {
    await migrateWith(client);
  } finally {
    await client.end();
  }
}

/** Brings the database up to date over `client` (connected, left open, outside a transaction). */
export async function migrateWith(client: pg.Client): Promise<void> {
  if (await upToDate(client)) return;
  // Quiet the NOTICEs of "IF NOT EXISTS" statements.
  await client.query("SET client_min_messages = warning");
  await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
  try {
    // Loaded only when there is something to apply (or the lock holder just applied it).
    const { drizzle } = await import("drizzle-orm/node-postgres");
    const { migrate: drizzleMigrate } = await import("drizzle-orm/node-postgres/migrator");
    await drizzleMigrate(drizzle(client), { migrationsFolder: migrationsFolder() });
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
  }
}

/**
 * Whether drizzle's migrator would apply nothing: it applies each journal entry newer than the
 * newest `created_at` recorded, so a record at least as new as the journal's newest means none.
 * A migration committing meanwhile is not seen yet: that start takes the lock and waits for it.
 */
async function upToDate(client: pg.Client): Promise<boolean> {
  const journal = JSON.parse(
    fs.readFileSync(path.join(migrationsFolder(), "meta", "_journal.json"), "utf8"),
  ) as { entries: { when: number }[] };
  const newest = Math.max(...journal.entries.map((entry) => entry.when));
  try {
    const { rows } = await client.query<{ last: string | null }>(
      "SELECT max(created_at)::text AS last FROM drizzle.__drizzle_migrations",
    );
    const last = rows[0]?.last;
    return last != null && Number(last) >= newest;
  } catch (error) {
    // Never migrated: the table (or its schema) does not exist yet.
    if ((error as { code?: string }).code === "42P01") return false;
    throw error;
  }
}
