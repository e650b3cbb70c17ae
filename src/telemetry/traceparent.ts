// W3C Trace Context's `traceparent` (version 00) both ways: how a span's place in a trace is
// stored in the database (agents.trace_context) and handed to commands (TRACEPARENT).
import {
  isSpanContextValid,
  ROOT_CONTEXT,
  trace,
  TraceFlags,
  type Context,
  type SpanContext,
} from "@opentelemetry/api";

const FORMAT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** `00-<trace id>-<span id>-<flags>`, or undefined for an invalid (non-recording no-op) span. */
export function formatTraceparent(span: SpanContext): string | undefined {
  if (!isSpanContextValid(span)) return undefined;
  const flags = (span.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, "0");
  return `00-${span.traceId}-${span.spanId}-${flags}`;
}

/** The span context a stored traceparent names (remote: it may be another process's), if valid. */
export function parseTraceparent(text: string | null | undefined): SpanContext | undefined {
  const match = FORMAT.exec(text?.trim().toLowerCase() ?? "");
  if (!match) return undefined;
  const span: SpanContext = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: parseInt(match[3]!, 16),
    isRemote: true,
  };
  return isSpanContextValid(span) ? span : undefined;
}

/** A context whose parent is the stored traceparent's span; the root context without one. */
export function contextOf(text: string | null | undefined): Context {
  const span = parseTraceparent(text);
  return span ? trace.setSpanContext(ROOT_CONTEXT, span) : ROOT_CONTEXT;
}
