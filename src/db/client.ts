// A database handle: a pg pool wrapped by drizzle. Created by callers and passed in, never global.
import { sql } from "drizzle-orm";
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import pg from "pg";
import { markUnnamed } from "./pooler.js";
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
  /** Server-side limits of each session; each defaults to its environment variable or default. */
  session?: Partial<SessionLimits>;
  /**
   * Commit without waiting for the WAL flush (synchronous_commit = off) unless a write asks for
   * a durable commit itself (DURABLE_COMMIT, `set local synchronous_commit = on`). For the
   * runtime: a server crash then loses at most the last fraction of a second of commits, as a
   * whole suffix (the WAL is one sequence; any durable commit flushes everything before it), so
   * the rows go back to an earlier consistent state and the turn loop redoes what was lost: a
   * model call is asked again. Writes whose loss would repeat something outside the database
   * (a command run, a file written) or break fencing (a claim's epoch) commit durably. Named
   * statements are also planned once per connection (plan_cache_mode = force_generic_plan).
   */
  relaxedCommits?: boolean;
  /**
   * Behind a pooler in transaction mode (WARREN_POOLER=transaction, db/pooler.ts): no startup
   * options; the session limits (and relaxed commits) are set at the start of each explicit
   * transaction instead, and db/prepared.ts runs unnamed statements.
   */
  pooler?: boolean;
}

/**
 * Makes the implicit transaction of the statement it is part of commit durably in a session with
 * relaxed commits: `with durable as (${DURABLE_COMMIT}) …`, referenced by the statement. The
 * setting is read at commit, and `true` (local) ends it with the transaction.
 */
export const DURABLE_COMMIT = "select set_config('synchronous_commit', 'on', true)";

/** A positive number of milliseconds from the environment; 0 is kept (it means "none"). */
function envMs(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return undefined;
  const value = Number(raw);
  return Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;
}

/** No statement of warren's runs this long; one that does sits on a dead (half-open) connection. */
const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

/** The client-side statement limit: the option, WARREN_DB_QUERY_TIMEOUT_MS, or 30 s. */
export function queryTimeoutMs(option?: number): number {
  const fromEnv = envMs("WARREN_DB_QUERY_TIMEOUT_MS");
  return option ?? (fromEnv ? fromEnv : undefined) ?? DEFAULT_QUERY_TIMEOUT_MS;
}

/**
 * What the server enforces on each of warren's sessions (SPEC §5), so that the locks of a client
 * that vanished (a dead thread, a killed process, a silent network) are released within seconds:
 * a transaction left idle is ended, a lock wait gives up (SQLSTATE 55P03, retried as transient),
 * and a statement whose client has long stopped waiting is cancelled. 0 leaves one unset (the
 * server's own setting applies), e.g. behind a pooler that rejects the `options` startup parameter.
 */
export interface SessionLimits {
  /** idle_in_transaction_session_timeout: WARREN_DB_IDLE_TX_TIMEOUT_MS, default 15 s. */
  idleInTransactionMs: number;
  /** lock_timeout: WARREN_DB_LOCK_TIMEOUT_MS, default 10 s. */
  lockTimeoutMs: number;
  /**
   * statement_timeout: WARREN_DB_STATEMENT_TIMEOUT_MS, default twice the client's query timeout
   * (60 s): the client always gives up first (and retries); this only ends a statement whose
   * client is gone.
   */
  statementTimeoutMs: number;
}

export function sessionLimits(
  overrides: Partial<SessionLimits> = {},
  clientQueryTimeoutMs = queryTimeoutMs(),
): SessionLimits {
  return {
    idleInTransactionMs:
      overrides.idleInTransactionMs ?? envMs("WARREN_DB_IDLE_TX_TIMEOUT_MS") ?? 15_000,
    lockTimeoutMs: overrides.lockTimeoutMs ?? envMs("WARREN_DB_LOCK_TIMEOUT_MS") ?? 10_000,
    statementTimeoutMs:
      overrides.statementTimeoutMs ??
      envMs("WARREN_DB_STATEMENT_TIMEOUT_MS") ??
      2 * clientQueryTimeoutMs,
  };
}

/**
 * The connection settings every warren connection shares: the session limits as startup options
 * (set at connect, no extra round trip; PostgreSQL 9.6+ knows all three) and TCP keepalives that
 * probe after 10 s of silence instead of the OS's two hours.
 */
export function sessionConfig(
  limits: SessionLimits,
  relaxedCommits = false,
): Pick<pg.ClientConfig, "options" | "keepAlive" | "keepAliveInitialDelayMillis"> {
  const settings = [
    ["idle_in_transaction_session_timeout", limits.idleInTransactionMs],
    ["lock_timeout", limits.lockTimeoutMs],
    ["statement_timeout", limits.statementTimeoutMs],
  ]
    .filter(([, ms]) => Number(ms) > 0)
    .map(([name, ms]) => `-c ${name}=${ms}`);
  if (relaxedCommits) {
    settings.push("-c synchronous_commit=off");
    // The runtime's named statements (db/prepared.ts) are planned once per connection: with the
    // default `auto`, Postgres plans a statement anew on each run while a custom plan looks
    // cheaper, which cost more than running the turn loop's short statements (pg_stat_statements).
    settings.push("-c plan_cache_mode=force_generic_plan");
  }
  return {
    ...(settings.length > 0 ? { options: settings.join(" ") } : {}),
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
  };
}

export const KEEPALIVE_DELAY_MS = 10_000;

/**
 * A client that gives up a connection whose query timed out: the server may still answer that
 * query later (or never: a half-open connection), so the socket is destroyed and the pool drops
 * the client, instead of handing it out again with the late answer in its stream.
 */
class FencedClient extends pg.Client {
  /**
   * The connection error this client ended with, if any. pg emits it as an 'error' event, and a
   * client checked out of the pool (inside a transaction, between two statements) has no other
   * listener: unheard, it would be an uncaught exception that ends the thread. Heard here, the
   * client's next statement fails ("not queryable", transient), its transaction is retried, and
   * the pool drops the client on release.
   */
  lostConnection: Error | undefined;

  constructor(config?: string | pg.ClientConfig) {
    super(config);
    if (typeof config === "object" && (config as PoolConfig).warrenPooler) markUnnamed(this);
    this.on("error", (err: Error) => {
      this.lostConnection ??= err;
    });
  }

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

/** The pool's options, which pg-pool hands to each client it creates (FencedClient reads it). */
type PoolConfig = pg.PoolConfig & { warrenPooler?: boolean };

export function createDb(connectionString: string, options: DbOptions = {}): Db {
  const queryTimeout = queryTimeoutMs(options.queryTimeoutMs);
  const limits = sessionLimits(options.session, queryTimeout);
  const session = sessionConfig(limits, options.relaxedCommits);
  const config: PoolConfig = {
    Client: FencedClient,
    connectionString,
    max: options.max ?? 4,
    application_name: options.applicationName ?? "warren",
    idleTimeoutMillis: 30_000,
    // A dead or half-open connection fails fast (and is retried) instead of hanging a turn.
    connectionTimeoutMillis: 10_000,
    query_timeout: queryTimeout,
    ...session,
  };
  if (options.pooler) {
    delete config.options;
    config.warrenPooler = true;
  }
  const pool = new pg.Pool(config);
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on("error", () => {});
  const db = drizzle(pool, { schema }) as Db;
  if (options.pooler) {
    markUnnamed(pool);
    settingsPerTransaction(db, transactionSettings(limits, options.relaxedCommits));
  }
  return db;
}

/**
 * The settings that sessionConfig sends at connect, as one statement local to a transaction
 * (set_config(…, true) ends with it), for a pooler that carries no session state; null if none.
 */
export function transactionSettings(limits: SessionLimits, relaxedCommits = false): string | null {
  const settings: [string, string][] = [
    ["idle_in_transaction_session_timeout", String(limits.idleInTransactionMs)],
    ["lock_timeout", String(limits.lockTimeoutMs)],
    ["statement_timeout", String(limits.statementTimeoutMs)],
  ].filter(([, ms]) => Number(ms) > 0) as [string, string][];
  // A write that must commit durably sets synchronous_commit = on later in its transaction (or
  // in its own statement, DURABLE_COMMIT), which overrides this. plan_cache_mode is left out: it
  // only concerns named statements, which a pooler cannot carry.
  if (relaxedCommits) settings.push(["synchronous_commit", "off"]);
  if (settings.length === 0) return null;
  return `select ${settings.map(([name, value]) => `set_config('${name}', '${value}', true)`).join(", ")}`;
}

/**
 * Each explicit transaction (db.transaction) starts with `settings`: the lock waits, the idle
 * transactions and the long statements that the session limits end are all inside explicit
 * transactions; a lone statement is its own transaction and the client's query timeout bounds it.
 * One round trip more per transaction, only behind a pooler.
 */
function settingsPerTransaction(db: Db, settings: string | null): void {
  if (settings === null) return;
  const begin = db.transaction.bind(db);
  db.transaction = ((work, config) =>
    begin(async (tx) => {
      await tx.execute(sql.raw(settings));
      return work(tx);
    }, config)) as Db["transaction"];
}

export async function closeDb(db: Db): Promise<void> {
  await db.$client.end();
}
