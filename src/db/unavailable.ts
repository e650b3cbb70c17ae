// The one-line failure "the database cannot be reached" and the URL masking its message uses;
// kept apart from the driver so the command line can recognise it without loading pg.

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
