// Transient database failures (SPEC §5): which errors are worth retrying (restart, killed
// connection, deadlock, serialization failure, too many connections, a lock wait or an idle
// transaction ended by the session's limits — see SessionLimits in client.ts), and withRetry, which
// retries with jittered backoff for up to about a minute. Also one-line descriptions of database
// errors that never carry SQL text.

import { POOLER_FIX, rejectsStartupParameter } from "./pooler.js";

/** SQLSTATEs that a retry can cure; class 08 (connection exception) is matched as a class. */
const TRANSIENT_SQLSTATES = new Set([
  "40001", // serialization_failure
  "40P01", // deadlock_detected
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, shutting down)
  "53300", // too_many_connections
  "55P03", // lock_not_available: lock_timeout ended a wait behind a lock (its holder may be gone)
  "25P03", // idle_in_transaction_session_timeout: the server ended a transaction left idle
]);

const TRANSIENT_NODE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ECONNABORTED",
]);

const TRANSIENT_MESSAGES = [
  /connection terminated/i,
  /query read timeout/i,
  /timeout exceeded when trying to connect/i,
  /client has encountered a connection error/i,
  /client was closed and is not queryable/i,
  /terminating connection due to administrator command/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /connection (?:reset|refused)/i,
];

/**
 * Failures that no retry cures, whatever their SQLSTATE: a pooler (PgBouncer reports everything
 * as 08P01, a connection exception) refusing a startup parameter or a login. Said once, not
 * retried as an outage.
 */
const PERMANENT_MESSAGES = [
  /unsupported startup parameter/i,
  /password authentication failed/i,
  /SASL authentication failed/i,
  /no such (?:user|database)/i,
  /no pg_hba\.conf entry/i,
];

/** SQLSTATE class 28: invalid authorization (a wrong password, a role that may not log in). */
const PERMANENT_CLASS = /^28[0-9A-Z]{3}$/;

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
}

/**
 * The error underneath wrappers: drizzle reports a failed statement as "Failed query: <SQL>"
 * with the driver's error as `cause`.
 */
export function rootCause(err: unknown): unknown {
  let current = err;
  for (let depth = 0; depth < 5; depth++) {
    const e = current as ErrorLike | null;
    if (!e || typeof e !== "object" || e.cause === undefined || e.cause === null) return current;
    if (typeof e.code === "string" && /^[0-9A-Z]{5}$/.test(e.code)) return current;
    current = e.cause;
  }
  return current;
}

function codeOf(err: unknown): string | undefined {
  const code = (err as ErrorLike | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  const message = (err as ErrorLike | null)?.message;
  return typeof message === "string" ? message : String(err);
}

/** Is `err` (or what it wraps) a configuration that every attempt fails the same way on? */
export function isPermanent(err: unknown): boolean {
  for (let current = err, depth = 0; current && depth < 5; depth++) {
    const code = codeOf(current);
    if (code !== undefined && PERMANENT_CLASS.test(code)) return true;
    const message = messageOf(current);
    if (!message.startsWith("Failed query:") && PERMANENT_MESSAGES.some((re) => re.test(message)))
      return true;
    current = (current as ErrorLike).cause;
  }
  return false;
}

/** Is `err` (or what it wraps) a failure that a retry after a pause may cure? */
export function isTransient(err: unknown): boolean {
  if (isPermanent(err)) return false;
  for (let current = err, depth = 0; current && depth < 5; depth++) {
    const code = codeOf(current);
    if (code !== undefined) {
      if (TRANSIENT_SQLSTATES.has(code) || TRANSIENT_NODE_CODES.has(code)) return true;
      if (/^08[0-9A-Z]{3}$/.test(code)) return true;
    }
    const errors = (current as { errors?: unknown }).errors; // AggregateError (IPv4 + IPv6)
    if (Array.isArray(errors) && errors.some(isTransient)) return true;
    if (!messageOf(current).startsWith("Failed query:")) {
      const message = messageOf(current);
      if (TRANSIENT_MESSAGES.some((re) => re.test(message))) return true;
    }
    current = (current as ErrorLike).cause;
  }
  return false;
}

/** A short reason for a database error, without SQL: "connection refused", "deadlock detected". */
export function describeDbError(err: unknown): string {
  const cause = rootCause(err);
  const code = codeOf(cause);
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ECONNRESET" || code === "EPIPE") return "connection reset";
  if (code === "ETIMEDOUT") return "connection timed out";
  let message = messageOf(cause);
  if (message.startsWith("Failed query:")) message = "query failed";
  const first = (message.split("\n")[0] ?? "").trim();
  const short = first.length > 120 ? `${first.slice(0, 119)}…` : first;
  const described =
    code && /^[0-9A-Z]{5}$/.test(code) ? `${short} [${code}]` : short || "unknown error";
  return rejectsStartupParameter(cause) ? `${described}; ${POOLER_FIX}` : described;
}

/** An error's first line for people: a database error's reason instead of drizzle's SQL text. */
export function shownError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (message.startsWith("Failed query:")) return `database error: ${describeDbError(err)}`;
  return (message.split("\n")[0] ?? "").trim() || "unknown error";
}

export interface RetryOptions {
  /** Stops retrying (the last error is thrown) once aborted. */
  signal?: AbortSignal;
  /** Called before each pause with the failure, the attempt number (1-based) and the pause. */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
  /** Give up once failures have lasted this long (from the first failure). Default 60 s. */
  maxElapsedMs?: number;
  /** First pause; doubled each attempt up to maxDelayMs, with jitter. Defaults 100 ms / 5 s. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Which failures are retried. Default: the transient ones (isTransient). */
  retryable?: (err: unknown) => boolean;
}

export const DEFAULT_RETRY_MS = 60_000;

/** The pause before attempt `attempt + 1`: exponential, capped, "equal jitter". */
export function backoffDelay(attempt: number, baseMs = 100, maxMs = 5_000): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 16));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/**
 * Runs `fn`, and again after a jittered pause whenever it fails transiently, until it succeeds,
 * fails otherwise, the time is up, or `signal` aborts. `fn` must be safe to repeat: a transaction
 * (rolled back when it failed) or a read.
 */
export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  let failingSince: number | undefined;
  const maxElapsed = options.maxElapsedMs ?? DEFAULT_RETRY_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (!(options.retryable ?? isTransient)(err) || options.signal?.aborted) throw err;
      failingSince ??= Date.now();
      const delay = backoffDelay(attempt, options.baseDelayMs, options.maxDelayMs);
      if (Date.now() - failingSince + delay > maxElapsed) throw err;
      options.onRetry?.(err, attempt, delay);
      await pause(delay, options.signal);
    }
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
