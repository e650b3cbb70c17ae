// A database handle: a pg pool wrapped by drizzle. Created by callers and passed in, never global.
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import pg from "pg";
import * as schema from "./schema.js";

export type Db = NodePgDatabase<typeof schema> & { $client: pg.Pool };
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
/** Anything queries can run on: the pool-backed handle or an open transaction. */
export type Queryable = Db | Tx;

export interface DbOptions {
  /** Pool size; the number of connections never depends on the number of agents. */
  max?: number;
  applicationName?: string;
}

export function createDb(connectionString: string, options: DbOptions = {}): Db {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 4,
    application_name: options.applicationName ?? "warren",
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on("error", () => {});
  return drizzle(pool, { schema }) as Db;
}

export async function closeDb(db: Db): Promise<void> {
  await db.$client.end();
}
