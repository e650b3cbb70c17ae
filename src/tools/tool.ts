// The tool contract: JSON-schema parameters for the model, a run function that never throws.
import type { ErrorCode } from "../agents/errors.js";
import { describeDbError, isTransient, rootCause } from "../db/retry.js";
import type { ShellSettings } from "../sandbox/settings.js";

export { ERROR_CODES, type ErrorCode } from "../agents/errors.js";

/** What a tool returns; serialised to JSON text as the tool result the model sees. */
export type ToolOutcome =
  /** `recordedEventId`: the tool already recorded its result event (wait does, atomically). */
  | { ok: true; value: unknown; recordedEventId?: number }
  | { ok: false; error: { code: ErrorCode; message: string } };

/** What every tool gets: where it runs and how it is stopped. Agent tools get more (see runtime). */
export interface BaseToolContext {
  /** Absolute working directory of the agent; relative paths resolve against it. */
  cwd: string;
  /** Aborted on interrupt or kill: the tool must stop at once (and kill its processes). */
  signal: AbortSignal;
  /** How commands run (sandbox, environment), from the config; absent: sandbox auto, no extras. */
  shell?: ShellSettings;
}

export interface Tool<C extends BaseToolContext = BaseToolContext> {
  name: string;
  description: string;
  /** JSON schema (type: "object") of the arguments, as offered to the model. */
  parameters: Record<string, unknown>;
  /**
   * Acts outside the database (runs a command, writes a file): its result commits durably even
   * where commits are relaxed, so a database crash cannot make the call run a second time.
   */
  outside?: boolean;
  /** Validates `args` itself (it comes straight from the model); never throws, except an
   *  AbortError when `ctx.signal` fires during a call that records its own result. */
  run(args: unknown, ctx: C): Promise<ToolOutcome>;
}

export function ok(value: unknown): ToolOutcome {
  return { ok: true, value };
}

export function fail(code: ErrorCode, message: string): ToolOutcome {
  return { ok: false, error: { code, message } };
}

/** The JSON text the model sees for an outcome. */
/**
 * The INTERNAL outcome for an unexpected failure: a generic message plus a short reason, never
 * SQL text; a database that stayed unreachable through the retries is "database unavailable".
 */
export function internalFailure(err: unknown): ToolOutcome {
  if (isTransient(err)) {
    return fail("INTERNAL", "database unavailable; nothing was done, try again later");
  }
  const cause = rootCause(err);
  const code = (cause as { code?: unknown } | null)?.code;
  if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) {
    return fail("INTERNAL", `internal error (database: ${describeDbError(cause)})`);
  }
  const first = (errorMessage(cause).split("\n")[0] ?? "").trim();
  const reason = first.startsWith("Failed query:") ? "query failed" : first.slice(0, 200);
  return fail("INTERNAL", `internal error${reason ? `: ${reason}` : ""}`);
}

export function outcomeText(outcome: ToolOutcome): string {
  return JSON.stringify(outcome.ok ? outcome.value : { error: outcome.error });
}

/** Normalises anything thrown into a message (graphile-worker's coerceError, in small). */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}
