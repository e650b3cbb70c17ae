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

/**
 * Brings the database up to date over `client` (connected, left open, outside a transaction).
 * Behind a pooler in transaction mode (`pooler`) a session's advisory lock could be taken on one
 * server connection and released on another (and then held until that connection closes), so
 * the whole migration runs in one transaction under a transaction-level lock instead.
 */
export async function migrateWith(
  client: pg.Client,
  options: { pooler?: boolean } = {},
): Promise<void> {
  if (await upToDate(client)) return;
  if (options.pooler) return migrateInOneTransaction(client);
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
 * drizzle's migrator inside a transaction of ours: its own BEGIN only warns ("already a
 * transaction in progress"), its COMMIT ends ours (releasing the lock once every migration is
 * in), and its ROLLBACK on a failure undoes everything; our COMMIT afterwards is then a no-op.
 */
async function migrateInOneTransaction(client: pg.Client): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query("SET LOCAL client_min_messages = error");
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
    const { drizzle } = await import("drizzle-orm/node-postgres");
    const { migrate: drizzleMigrate } = await import("drizzle-orm/node-postgres/migrator");
    await drizzleMigrate(drizzle(client), { migrationsFolder: migrationsFolder() });
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
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
