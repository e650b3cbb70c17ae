// Named (prepared) statements for the hot paths: Postgres parses and plans them once per
// connection instead of on every call, which is most of the cost of a short statement.
import type pg from "pg";
import type { QueryResultRow } from "pg";
import type { Db, Queryable } from "./client.js";
import { isUnnamed } from "./pooler.js";

export interface Prepared {
  name: string;
  text: string;
}

// Behind a pooler in transaction mode (db/pooler.ts markUnnamed) a named statement prepared on
// one server connection is unknown on the next the pooler picks ("prepared statement … does not
// exist"): there statements go unnamed, parsed and planned on each call.

/** Whether named statements may be used on `q` (false behind a pooler in transaction mode). */
export function namedStatements(q: Queryable): boolean {
  return !isUnnamed(clientOf(q));
}

/**
 * Runs a named statement on `q`: the pool (any connection), or the connection of an open
 * transaction. Rows come as pg parses them (timestamps as Date, bigint as text, json parsed),
 * without drizzle's building and mapping, which cost more CPU than a short statement's run.
 */
export async function runPrepared<R extends QueryResultRow>(
  q: Queryable,
  statement: Prepared,
  values: unknown[],
): Promise<R[]> {
  const client = clientOf(q);
  const result = isUnnamed(client)
    ? await client.query<R>({ text: statement.text, values })
    : await client.query<R>({ name: statement.name, text: statement.text, values });
  return result.rows;
}

/**
 * The pg pool or client under a drizzle handle. drizzle keeps it as `session.client` on both the
 * database and a transaction (node-postgres driver); test/db/prepared.test.ts fails if an
 * upgrade moves it, rather than statements silently running outside their transaction.
 */
function clientOf(q: Queryable): pg.Pool | pg.PoolClient {
  const client = (q as unknown as { session?: { client?: pg.Pool | pg.PoolClient } }).session
    ?.client;
  if (!client || typeof client.query !== "function") {
    throw new Error("no pg client under this drizzle handle (node-postgres driver expected)");
  }
  return client;
}

/**
 * Building a drizzle query with a column list costs more CPU than running it (about 0.3–2 ms per
 * build on this project's machine against 0.4 ms for the statement itself), so the hot reads are
 * built once per database handle and shape, with placeholders, and run as named statements.
 * Transactions build their queries as usual: only a pool-backed handle is cached.
 */
const built = new WeakMap<Db, Map<string, unknown>>();

export function preparedFor<T>(db: Db, key: string, build: () => T): T {
  let cache = built.get(db);
  if (!cache) built.set(db, (cache = new Map()));
  let query = cache.get(key) as T | undefined;
  if (query === undefined) {
    query = build();
    cache.set(key, query);
  }
  return query;
}

/** Is `q` the pool-backed handle (not a transaction)? */
export function isPool(q: Queryable): q is Db {
  return "$client" in q;
}
