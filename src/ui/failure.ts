// A caught failure as the one line a person reads: agent errors as they are, database trouble
// without SQL or stack ("database unreachable (connection refused); try again").
import { isAgentError } from "../agents/errors.js";
import { describeDbError, isTransient } from "../db/retry.js";
import { describeOutage } from "../db/warning.js";
import { firstLine } from "../text/format.js";

export function describeFailure(error: unknown): string {
  if (isAgentError(error)) return firstLine(error.message);
  if (isTransient(error) || unavailable(error)) {
    return `${describeOutage(describeDbError(error))}; try again`;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (message.startsWith("Failed query:")) return describeDbError(error);
  return firstLine(message) || "unexpected error";
}

/** Connecting failed for a reason isTransient does not retry (e.g. connections not allowed). */
function unavailable(error: unknown): boolean {
  for (
    let e = error as { message?: unknown; cause?: unknown } | undefined, i = 0;
    e && i < 5;
    i++
  ) {
    if (
      typeof e.message === "string" &&
      /accepting connections|connection terminated|connect E/i.test(e.message)
    ) {
      return true;
    }
    e = e.cause as typeof e;
  }
  return false;
}
