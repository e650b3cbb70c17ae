// Warnings for people, as data from where they arise (retries, the listener, the runtime, the
// feed) to where they are drawn (the CLI's stderr, the TUI's status bar and notices); worded once.
import { describeDbError } from "./retry.js";

export type Warning =
  /** The database (or the listener's connection to it) failed transiently; calls are retried. */
  | { kind: "outage"; cause: string }
  /** The connection is back. */
  | { kind: "outage-over" }
  /** No LISTEN (turned off, or its connection failed): waits and claims poll instead. */
  | { kind: "notifications-off"; cause: string; poll: string }
  /** Anything else worth one line to a person. */
  | { kind: "notice"; text: string };

/** Receives warnings (the runtime's, the bus's `onWarning`). */
export type WarningSink = (warning: Warning) => void;

/** A transient database failure, as the outage it is part of. */
export function outage(err: unknown): Warning {
  return { kind: "outage", cause: describeDbError(err) };
}

export function notice(text: string): Warning {
  return { kind: "notice", text };
}

/** "database unreachable (connection refused)": the outage's words, where a failure is shown. */
export function describeOutage(cause: string): string {
  return `database unreachable (${cause})`;
}

/**
 * The one line a warning is shown as; `status` is the status bar's form, which stands for the
 * whole outage rather than one failed call.
 */
export function wordWarning(warning: Warning, form: "line" | "status" = "line"): string {
  switch (warning.kind) {
    case "outage":
      return form === "status"
        ? "database unreachable — reconnecting…"
        : `${describeOutage(warning.cause)}; retrying`;
    case "outage-over":
      return "database reachable again";
    case "notifications-off":
      return `notifications unavailable (${warning.cause}); ${warning.poll}`;
    case "notice":
      return warning.text;
  }
}

/**
 * Passes warnings through, but folds repeats of an outage into one: every thread and agent says
 * so while it retries, and it shows once, then again only after `quietMs` without any; likewise
 * "notifications unavailable" (each thread's bus says it), on its own.
 */
export function outageFilter(warn: WarningSink, quietMs = 30_000): WarningSink {
  const last = { outage: -Infinity, "notifications-off": -Infinity };
  return (warning) => {
    if (warning.kind !== "outage" && warning.kind !== "notifications-off") return warn(warning);
    const now = Date.now();
    const fresh = now - last[warning.kind] > quietMs;
    last[warning.kind] = now;
    if (fresh) warn(warning);
  };
}
