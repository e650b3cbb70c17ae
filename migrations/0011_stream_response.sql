-- agent_streams.response: the transaction id that first wrote a model response's text, so feeds can
-- tell a newer response from an older one when hints and row reads interleave (src/feed/stream-state.ts).
ALTER TABLE "agent_streams" ADD COLUMN "response" bigint DEFAULT 0 NOT NULL;