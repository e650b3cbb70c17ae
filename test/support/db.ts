// Per-test-file databases cloned from the migrated template built by ./global-setup.ts.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";
import { closeDb, createDb, type Db } from "../../src/db/client.js";

export interface TestDatabase {
  url: string;
  db: Db;
  /** Closes `db` and drops the database. */
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** An empty database (no migrations) instead of a clone of the template. */
  empty?: boolean;
}

export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const adminUrl = inject("testDatabaseAdminUrl");
  const template = inject("testDatabaseTemplate");
  const name = `warren_t_${randomBytes(6).toString("hex")}`;
  const source = options.empty ? "" : ` TEMPLATE "${template}"`;
  await withAdmin(adminUrl, async (client) => {
    // Cloning fails while anyone is connected to the template; others' clones hold it only briefly.
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE "${name}"${source}`);
        return;
      } catch (error) {
        const busy = (error as { code?: string }).code === "55006"; // object_in_use
        if (!busy || attempt >= 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 100));
      }
    }
  });
  const url = withDatabase(adminUrl, name);
  const db = createDb(url);
  let dropped = false;
  return {
    url,
    db,
    async drop() {
      if (dropped) return;
      dropped = true;
      await closeDb(db);
      await withAdmin(adminUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
      );
    },
  };
}

/** Registers beforeAll/afterAll for one database per test file; call the getter inside tests. */
export function useTestDatabase(options: TestDatabaseOptions = {}): () => TestDatabase {
  let current: TestDatabase | undefined;
  beforeAll(async () => {
    current = await createTestDatabase(options);
  });
  afterAll(async () => {
    await current?.drop();
  });
  return () => {
    if (!current)
      throw new Error("useTestDatabase(): the database exists only once beforeAll has run");
    return current;
  };
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function withAdmin<T>(
  adminUrl: string,
  action: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({
    connectionString: adminUrl,
    application_name: "warren-test-admin",
  });
  await client.connect();
  try {
    return await action(client);
  } finally {
    await client.end();
  }
}
