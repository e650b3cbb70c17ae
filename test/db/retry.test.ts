// Transient database failures: classification (through drizzle's "Failed query" wrapper),
// withRetry's retry/give-up rules, and descriptions that never carry SQL.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../support/db.js";
import { describeDbError, isTransient, shownError, withRetry } from "../../src/db/retry.js";
import { internalFailure } from "../../src/tools/tool.js";
import { notice, outageFilter, wordWarning, type Warning } from "../../src/db/warning.js";

const database = useTestDatabase();

function pgError(code: string, message = "boom"): Error {
  return Object.assign(new Error(message), { code });
}
function wrapped(cause: unknown): Error {
  return Object.assign(new Error("Failed query: insert into mail values ($1)\nparams: x"), {
    cause,
  });
}

describe("isTransient", () => {
  it("knows restarts, lost connections, deadlocks and serialization failures", () => {
    const codes = ["40001", "40P01", "57P01", "57P02", "57P03", "08006", "08001", "53300"];
    // A lock wait ended by lock_timeout; a transaction ended by idle_in_transaction_session_timeout.
    for (const code of [...codes, "55P03", "25P03"]) {
      expect(isTransient(pgError(code)), code).toBe(true);
      expect(isTransient(wrapped(pgError(code))), `wrapped ${code}`).toBe(true);
    }
    for (const code of ["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT"]) {
      expect(isTransient(pgError(code)), code).toBe(true);
    }
    expect(isTransient(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isTransient(wrapped(new Error("Connection terminated unexpectedly")))).toBe(true);
  });

  it("does not retry real errors", () => {
    for (const code of ["23505", "22P02", "42P01", "22021"]) {
      expect(isTransient(pgError(code)), code).toBe(false);
      expect(isTransient(wrapped(pgError(code))), code).toBe(false);
    }
    expect(isTransient(new Error("nope"))).toBe(false);
    expect(isTransient(undefined)).toBe(false);
  });

  it("never retries a pooler's refusal of a startup parameter or a login, but does its outages", () => {
    // PgBouncer says everything with SQLSTATE 08P01 (class 08, a connection exception).
    const permanent = [
      "unsupported startup parameter: options",
      "password authentication failed",
      'no such database: "warren"',
      "no such user: bob",
    ];
    for (const message of permanent) {
      expect(isTransient(pgError("08P01", message)), message).toBe(false);
      expect(isTransient(wrapped(pgError("08P01", message))), message).toBe(false);
    }
    expect(isTransient(pgError("28P01", "password authentication failed for user"))).toBe(false);
    expect(describeDbError(pgError("08P01", "unsupported startup parameter: options"))).toBe(
      "unsupported startup parameter: options [08P01]; set WARREN_POOLER=transaction (a pooler such as PgBouncer in transaction mode)",
    );
    // Its outages stay transient: the server behind it down, a wait for a server connection.
    for (const message of ["pgbouncer cannot connect to server", "query_wait_timeout"]) {
      expect(isTransient(pgError("08P01", message)), message).toBe(true);
    }
  });

  it("classifies what the driver really throws against a real server", async () => {
    const refused = new pg.Client({ connectionString: "postgres://x@127.0.0.1:1/x" });
    const err = await refused.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isTransient(err)).toBe(true);
    const { db } = database();
    const failed = await db.execute("select 1/0" as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isTransient(failed)).toBe(false);
    expect(describeDbError(failed)).toBe("division by zero [22012]");
  });
});

describe("withRetry", () => {
  it("retries transient failures and returns the first success", async () => {
    const seen: number[] = [];
    const value = await withRetry(
      async (attempt) => {
        if (attempt < 3) throw pgError("40P01");
        return "ok";
      },
      { baseDelayMs: 1, onRetry: (_err, attempt) => seen.push(attempt) },
    );
    expect(value).toBe("ok");
    expect(seen).toEqual([1, 2]);
  });

  it("throws other errors at once, and transient ones once the time is up", async () => {
    let calls = 0;
    await expect(
      withRetry(async () => {
        calls++;
        throw pgError("23505");
      }),
    ).rejects.toThrow("boom");
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      withRetry(
        async () => {
          calls++;
          throw pgError("08006", "gone");
        },
        { baseDelayMs: 5, maxDelayMs: 5, maxElapsedMs: 500 },
      ),
    ).rejects.toThrow("gone");
    expect(calls).toBeGreaterThan(2);
  });

  it("stops when aborted", async () => {
    const controller = new AbortController();
    let calls = 0;
    const run = withRetry(
      async () => {
        calls++;
        if (calls === 2) controller.abort();
        throw pgError("57P01", "shutdown");
      },
      { signal: controller.signal, baseDelayMs: 1 },
    );
    await expect(run).rejects.toThrow("shutdown");
    expect(calls).toBe(2);
  });
});

describe("what people and models are told", () => {
  it("never SQL text", () => {
    const err = wrapped(pgError("22021", 'invalid byte sequence for encoding "UTF8": 0x00'));
    expect(shownError(err)).toBe(
      'database error: invalid byte sequence for encoding "UTF8": 0x00 [22021]',
    );
    const outcome = internalFailure(err);
    expect(outcome).toEqual({
      ok: false,
      error: {
        code: "INTERNAL",
        message:
          'internal error (database: invalid byte sequence for encoding "UTF8": 0x00 [22021])',
      },
    });
    expect(internalFailure(wrapped(pgError("08006")))).toEqual({
      ok: false,
      error: {
        code: "INTERNAL",
        message: "database unavailable; nothing was done, try again later",
      },
    });
  });

  it("one line per outage, and one for notifications off", () => {
    const lines: string[] = [];
    const warn = outageFilter((w: Warning) => lines.push(wordWarning(w)), 1_000);
    warn({ kind: "outage", cause: "connection refused" });
    warn({ kind: "outage", cause: "connection lost" }); // the listener's
    warn({ kind: "notifications-off", cause: "LISTEN is off", poll: "polling" });
    warn({ kind: "outage", cause: "connection reset" });
    warn({ kind: "notifications-off", cause: "LISTEN is off", poll: "polling" });
    warn(notice("something else"));
    expect(lines).toEqual([
      "database unreachable (connection refused); retrying",
      "notifications unavailable (LISTEN is off); polling",
      "something else",
    ]);
  });
});
