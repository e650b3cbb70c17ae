-- A child's result as its parent's `wait` reads it (issue 42): the mail's value parsed when the
-- sender's output schema accepted it (send, or its final text mailed for it), so every wait that
-- takes the mail — fan-in, the oldest mail, a send handing it to a blocked wait — reports it.
ALTER TABLE "mail" ADD COLUMN "result" jsonb;
