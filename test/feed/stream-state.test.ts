// The stream hints' format and the rules a feed follows to build a stream from hints and rows in
// any interleaving: deltas applied in order, covered ones skipped, gaps and unknown responses
// read, an older response never replacing a newer one.
import { describe, expect, it } from "vitest";
import {
  deltaPayloadTail,
  parseStreamHint,
  type StreamDelta,
} from "../../src/feed/stream-hints.js";
import { applyDelta, applyEnd, mergeRow, type StreamState } from "../../src/feed/stream-state.js";

const AGENT = "0b6f4d1e-8a4b-4a8e-9f0e-2a1c3d4e5f60";

function delta(response: number, textAt: number, text: string, reasoningAt = 0, reasoning = "") {
  return { agentId: AGENT, response, textAt, reasoningAt, text, reasoning, written: false };
}

/** Folds deltas into a state, as a feed does, and says whether any asked for a read. */
function fold(state: StreamState | undefined, deltas: StreamDelta[]) {
  let read = false;
  for (const d of deltas) {
    const step = applyDelta(state, d);
    state = step.state;
    read ||= step.read;
  }
  return { state, read };
}

describe("stream hints", () => {
  it("round-trip a delta whose text holds colons, newlines and astral characters", () => {
    const tail = deltaPayloadTail({
      textAt: 12,
      reasoningAt: 3,
      text: "a: b\n🦊:",
      reasoning: "x:y",
    });
    expect(parseStreamHint(`d:${AGENT}:42:${tail}`)).toEqual({
      kind: "delta",
      agentId: AGENT,
      response: 42,
      textAt: 12,
      reasoningAt: 3,
      text: "a: b\n🦊:",
      reasoning: "x:y",
      written: false,
    });
    expect(parseStreamHint(`w:${AGENT}:42:${tail}`)).toMatchObject({ written: true });
  });

  it("parse an end, a bare stream hint, and refuse malformed ones", () => {
    expect(parseStreamHint(`s:${AGENT}:7:end`)).toEqual({
      kind: "end",
      agentId: AGENT,
      response: 7,
    });
    expect(parseStreamHint(`s:${AGENT}`)).toEqual({ kind: "stream", agentId: AGENT });
    expect(parseStreamHint(`a:${AGENT}`)).toBeUndefined();
    expect(parseStreamHint(`d:${AGENT}:7:0:0`)).toBeUndefined();
    expect(parseStreamHint(`d:${AGENT}:7:0:0:9:short`)).toBeUndefined();
    expect(parseStreamHint(`d:${AGENT}:x:0:0:0:text`)).toBeUndefined();
    expect(parseStreamHint(`s:${AGENT}:7:later`)).toBeUndefined();
  });
});

describe("a stream built from hints and rows", () => {
  it("applies deltas in order, text and reasoning side by side", () => {
    const { state, read } = fold(undefined, [
      delta(5, 0, "", 0, "think"),
      delta(5, 0, "Hel", 5, "ing"),
      delta(5, 3, "lo"),
    ]);
    expect(read).toBe(false);
    expect(state).toEqual({ response: 5, text: "Hello", reasoning: "thinking", live: true });
  });

  it("asks for a read on a gap (a lost hint) and keeps what it had", () => {
    const start = fold(undefined, [delta(5, 0, "Hel")]).state;
    const step = applyDelta(start, delta(5, 5, " world"));
    expect(step).toEqual({ state: start, read: true });
    // A feed that starts watching mid-response knows nothing before the offset either.
    expect(applyDelta(undefined, delta(5, 3, "lo")).read).toBe(true);
  });

  it("skips what a read already brought, and takes only the new end of an overlapping delta", () => {
    const read = mergeRow(undefined, { response: 5, text: "Hello wo", reasoning: "", live: true });
    expect(applyDelta(read, delta(5, 3, "lo")).state).toBe(read);
    expect(applyDelta(read, delta(5, 5, " world")).state).toMatchObject({ text: "Hello world" });
  });

  it("starts over on a newer response and ignores an older one's late hints", () => {
    const old = fold(undefined, [delta(5, 0, "first answer")]).state;
    const next = applyDelta(old, delta(9, 0, "sec")).state;
    expect(next).toEqual({ response: 9, text: "sec", reasoning: "", live: true });
    expect(applyDelta(next, delta(5, 12, " more")).state).toBe(next);
    expect(applyEnd(next, 5).state).toBe(next);
  });

  it("ends a response, and reads one whose end comes first", () => {
    const live = fold(undefined, [delta(5, 0, "done")]).state;
    expect(applyEnd(live, 5).state).toMatchObject({ text: "done", live: false });
    expect(applyEnd(live, 6).read).toBe(true);
    expect(applyEnd(undefined, 6).read).toBe(true);
    // A delta after its response's end changes nothing (the assistant event replaces it).
    const ended = applyEnd(live, 5).state;
    expect(applyDelta(ended, delta(5, 4, "!")).state).toBe(ended);
  });

  it("merges a row: the newer response wins, within one the longer text and the end", () => {
    const known: StreamState = { response: 5, text: "Hello world", reasoning: "r", live: true };
    // A row written before the last hints (rows are coalesced): the hints' text stays.
    expect(mergeRow(known, { response: 5, text: "Hello", reasoning: "r", live: true })).toEqual(
      known,
    );
    // A row ahead of the hints heard (the listener lags the read).
    expect(
      mergeRow(known, { response: 5, text: "Hello world!", reasoning: "r", live: false }),
    ).toEqual({ response: 5, text: "Hello world!", reasoning: "r", live: false });
    // An older response's row (read before the newer one's first write) changes nothing; a newer
    // one replaces the text even when it is shorter.
    expect(mergeRow(known, { response: 4, text: "x", reasoning: "", live: true })).toBe(known);
    expect(mergeRow(known, { response: 8, text: "Hi", reasoning: "", live: true })).toEqual({
      response: 8,
      text: "Hi",
      reasoning: "",
      live: true,
    });
    expect(mergeRow(known, undefined)).toBe(known);
  });
});
