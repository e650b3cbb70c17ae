-- Span links for mail (issue 42 §3): the W3C traceparent of the span that sent a mail (the
-- sender's `send` call, or the run whose final answer was mailed for it), so the span that takes
-- the mail in (the receiver's `wait`, or its run) links back to it, across processes and hosts.
-- Null when telemetry was off for the sender.
ALTER TABLE "mail" ADD COLUMN "trace_context" text;
