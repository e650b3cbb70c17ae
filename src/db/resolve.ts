// Which database warren uses (DATABASE_URL, else the embedded server under $WARREN_HOME), checked
// for reachability with a one-line error, migrated and opened.
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { createDb, type Db } from "./client.js";
import { migrate } from "./migrate.js";

type Env = Record<string, string | undefined>;

/** The database cannot be reached; `message` is one line, safe to show (no password). */
export class DatabaseUnavailableError extends Error {
  override name = "DatabaseUnavailableError";
  constructor(
    message: string,
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** `$WARREN_HOME`, else `$XDG_DATA_HOME/warren`, else `~/.local/share/warren`. */
export function warrenHome(env: Env = process.env): string {
  if (env.WARREN_HOME) return path.resolve(env.WARREN_HOME);
  const dataHome = env.XDG_DATA_HOME || path.join(env.HOME || os.homedir(), ".local", "share");
  return path.resolve(dataHome, "warren");
}

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
}

/** Connects once and runs `SELECT 1`, turning any failure into a DatabaseUnavailableError. */
export async function connectChecked(
  url: string,
  options: ConnectCheckOptions = {},
): Promise<void> {
  const { source = "DATABASE_URL", timeoutMs = 5_000 } = options;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (error) {
    const where = `${maskUrl(url)} (${source})`;
    throw new DatabaseUnavailableError(
      `cannot reach the database at ${where}: ${describe(error, timeoutMs)}`,
      maskUrl(url),
      {
        cause: error,
      },
    );
  } finally {
    await client.end().catch(() => {});
  }
}

/** Resolves, checks, migrates and opens the database. */
export async function openDatabase(env: Env = process.env): Promise<{ db: Db; url: string }> {
  const url = await resolveDatabaseUrl(env);
  await connectChecked(url, {
    source: env.DATABASE_URL ? "DATABASE_URL" : `embedded, ${warrenHome(env)}`,
  });
  await migrate(url);
  return { db: createDb(url), url };
}

/** The URL without its password (and without query parameters, which may carry one). */
export function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username ? `${parsed.username}@` : "";
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`;
  } catch {
    return "(unparsable URL)";
  }
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
