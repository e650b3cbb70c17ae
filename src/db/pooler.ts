// Behind a connection pooler in transaction mode (PgBouncer's pool_mode = transaction): each
// transaction may run on a different server connection, so nothing may live in the session.
// WARREN_POOLER=transaction turns warren's database use into what such a pooler carries: no
// startup options (the pooler rejects `options`), the session limits and relaxed commits set per
// transaction instead, unnamed statements instead of named ones, and LISTEN off unless
// WARREN_LISTEN_URL names a direct connection. See docs/pooler.md.

type Env = Record<string, string | undefined>;

export type PoolerMode = "transaction";

/** A bad WARREN_POOLER; the config module reports it as a ConfigError. */
export class PoolerSettingError extends Error {
  override name = "PoolerSettingError";
}

/** WARREN_POOLER: "transaction", or unset / "" / "off" / "none" (a direct connection). */
export function poolerSetting(env: Env): PoolerMode | undefined {
  const raw = env.WARREN_POOLER?.trim().toLowerCase();
  if (!raw || raw === "off" || raw === "none") return undefined;
  if (raw === "transaction") return "transaction";
  throw new PoolerSettingError(
    `WARREN_POOLER must be "transaction" (behind a pooler in transaction mode) or "off", got ${JSON.stringify(env.WARREN_POOLER)}`,
  );
}

/** The fix named wherever a pooler's refusal of the startup options is reported. */
export const POOLER_FIX =
  "set WARREN_POOLER=transaction (a pooler such as PgBouncer in transaction mode)";

/**
 * Whether `err` is a server refusing a startup parameter, as PgBouncer does with `options`
 * ("unsupported startup parameter: options", SQLSTATE 08P01). Permanent: every reconnect is
 * refused the same way.
 */
export function rejectsStartupParameter(err: unknown): boolean {
  for (let current = err, depth = 0; current && depth < 5; depth++) {
    const { code, message, cause } = current as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
    };
    if (
      (code === "08P01" || code === undefined) &&
      typeof message === "string" &&
      /unsupported startup parameter/i.test(message)
    ) {
      return true;
    }
    current = cause;
  }
  return false;
}

/** Pools and clients behind a pooler in transaction mode: they run unnamed statements only. */
const unnamed = new WeakSet<object>();

export function markUnnamed(poolOrClient: object): void {
  unnamed.add(poolOrClient);
}

export function isUnnamed(poolOrClient: object): boolean {
  return unnamed.has(poolOrClient);
}
