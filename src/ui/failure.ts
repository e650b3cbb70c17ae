// A caught failure as the one line a person reads: agent errors as they are, database trouble
// without SQL or stack ("database unreachable (connection refused)").
import { isAgentError } from "../agents/errors.js";
import { describeDbError, isTransient } from "../db/retry.js";

export function describeFailure(error: unknown): string {
  if (isAgentError(error)) return firstLine(error.message);
  if (isTransient(error)) return `database unreachable (${describeDbError(error)}); try again`;
  const message = error instanceof Error ? error.message : String(error);
  if (message.startsWith("Failed query:")) return describeDbError(error);
  return firstLine(message) || "unexpected error";
}

function firstLine(text: string): string {
  return text.trim().split("\n")[0] ?? "";
}
