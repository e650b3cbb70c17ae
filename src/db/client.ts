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
  /** Client-side limit of one statement (default 30 s, or WARREN_DB_QUERY_TIMEOUT_MS). */
  queryTimeoutMs?: number;
}

function envTimeout(): number | undefined {
  const value = Number(process.env.WARREN_DB_QUERY_TIMEOUT_MS);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/** No statement of warren's runs this long; one that does sits on a dead (half-open) connection. */
const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

/**
 * A client that gives up a connection whose query timed out: the server may still answer that
 * query later (or never: a half-open connection), so the socket is destroyed and the pool drops
 * the client, instead of handing it out again with the late answer in its stream.
 */
class FencedClient extends pg.Client {
  override query(...args: unknown[]): never {
    const result = (super.query as (...a: unknown[]) => unknown).apply(this, args);
    if (result && typeof (result as Promise<unknown>).catch === "function") {
      (result as Promise<unknown>).catch((err: unknown) => this.dropIfTimedOut(err));
    }
    return result as never;
  }

  private dropIfTimedOut(err: unknown): void {
    if (err instanceof Error && /query read timeout/i.test(err.message)) {
      (
        this as unknown as { connection: { stream: { destroy(): void } } }
      ).connection.stream.destroy();
    }
  }
}

export function createDb(connectionString: string, options: DbOptions = {}): Db {
  const pool = new pg.Pool({
    Client: FencedClient,
    connectionString,
    max: options.max ?? 4,
    application_name: options.applicationName ?? "warren",
    idleTimeoutMillis: 30_000,
    // A dead or half-open connection fails fast (and is retried) instead of hanging a turn.
    connectionTimeoutMillis: 10_000,
    query_timeout: options.queryTimeoutMs ?? envTimeout() ?? DEFAULT_QUERY_TIMEOUT_MS,
    keepAlive: true,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on("error", () => {});
  return drizzle(pool, { schema }) as Db;
}

export async function closeDb(db: Db): Promise<void> {
  await db.$client.end();
}
