// Which database warren uses (DATABASE_URL, else the embedded server under $WARREN_HOME), checked
// for reachability with a one-line error, migrated and opened.
import pg from "pg";
import { warrenHome } from "../paths.js";
import { createDb, type Db } from "./client.js";
import { migrateWith } from "./migrate.js";
import { POOLER_FIX, poolerSetting, rejectsStartupParameter } from "./pooler.js";
import { DatabaseUnavailableError, maskUrl } from "./unavailable.js";

export { DatabaseUnavailableError, maskUrl };

type Env = Record<string, string | undefined>;

/** `$WARREN_HOME`, else `$XDG_DATA_HOME/warren`, else `~/.local/share/warren`. */
export { warrenHome };

export async function resolveDatabaseUrl(env: Env = process.env): Promise<string> {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  // Loaded only without DATABASE_URL: the embedded server's package is large.
  const { ensureEmbedded } = await import("./embedded.js");
  return ensureEmbedded(warrenHome(env));
}

export interface ConnectCheckOptions {
  /** Where the URL came from, named in the error, e.g. "DATABASE_URL" or "embedded". */
  source?: string;
  timeoutMs?: number;
  /** Behind a pooler in transaction mode (WARREN_POOLER): connect without startup options. */
  pooler?: boolean;
}

/**
 * What the check connection sends as startup options when not behind a pooler: harmless (the
 * migrations set it anyway), but a pooler that rejects warren's pools' options rejects it the
 * same way, so that is said at once, with the fix, instead of by the pools' first query.
 */
const PROBE_OPTIONS = "-c client_min_messages=warning";

/** Connects once and runs `SELECT 1`, turning any failure into a DatabaseUnavailableError. */
export async function connectChecked(
  url: string,
  options: ConnectCheckOptions = {},
): Promise<void> {
  const client = await connectClient(url, options);
  await client.end().catch(() => {});
}

/** connectChecked's connection, left open for the caller to use and end. */
async function connectClient(url: string, options: ConnectCheckOptions): Promise<pg.Client> {
  const { source = "DATABASE_URL", timeoutMs = 5_000 } = options;
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: timeoutMs,
    ...(options.pooler ? {} : { options: PROBE_OPTIONS }),
  });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
    return client;
  } catch (error) {
    await client.end().catch(() => {});
    const where = `${maskUrl(url)} (${source})`;
    if (rejectsStartupParameter(error)) {
      const code = (error as { code?: string }).code;
      const reason = `${describe(error, timeoutMs)}${code ? ` [${code}]` : ""}`;
      throw new DatabaseUnavailableError(
        `the database at ${where} rejects warren's startup options (${reason}): ${POOLER_FIX}`,
        maskUrl(url),
        { cause: error },
      );
    }
    throw new DatabaseUnavailableError(
      `cannot reach the database at ${where}: ${describe(error, timeoutMs)}`,
      maskUrl(url),
      {
        cause: error,
      },
    );
  }
}

/**
 * Resolves, checks, migrates and opens the database. The check's connection also migrates (or,
 * as on most starts, only sees that nothing is left to apply).
 */
export async function openDatabase(env: Env = process.env): Promise<{ db: Db; url: string }> {
  const url = await resolveDatabaseUrl(env);
  const pooler = poolerSetting(env) === "transaction";
  const client = await connectClient(url, {
    source: env.DATABASE_URL ? "DATABASE_URL" : `embedded, ${warrenHome(env)}`,
    pooler,
  });
  try {
    await migrateWith(client, { pooler });
  } finally {
    await client.end().catch(() => {});
  }
  return { db: createDb(url, { pooler }), url };
}

function describe(error: unknown, timeoutMs: number): string {
  const { code, message = String(error) } = error as { code?: string; message?: string };
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "host not found";
    case "ETIMEDOUT":
      return `timed out after ${timeoutMs / 1000} s`;
    case "28P01":
      return "password authentication failed";
  }
  if (/timeout/i.test(message)) return `timed out after ${timeoutMs / 1000} s`;
  return message.split("\n")[0] ?? "";
}
