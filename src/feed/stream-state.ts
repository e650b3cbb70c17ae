// What a feed knows of one watched agent's stream, and how hints and row reads move it on. Pure:
// the feed applies hints as they arrive and rows when its reads return, in whatever interleaving;
// these rules make the result the same — text never goes back, an older response never replaces
// a newer one, and a delta that does not continue the known text asks for a read instead.
import type { StreamDelta } from "./stream-hints.js";

export interface StreamState {
  /** agent_streams.response: larger is newer. */
  response: number;
  text: string;
  reasoning: string;
  live: boolean;
}

export interface Step {
  /** The state after the hint (the same object when nothing changed). */
  state: StreamState | undefined;
  /** The known text cannot take the hint (a gap, or a response not seen yet): read the row. */
  read: boolean;
}

/** A `d:`/`w:` hint: appended when it continues the known text, else a read is asked for. */
export function applyDelta(state: StreamState | undefined, delta: StreamDelta): Step {
  if (state && delta.response < state.response) return { state, read: false };
  const same = state?.response === delta.response;
  if (same && !state.live) return { state, read: false }; // ended: the event replaces it
  const base = same ? state : { response: delta.response, text: "", reasoning: "", live: true };
  const text = extend(base.text, delta.textAt, delta.text);
  const reasoning = extend(base.reasoning, delta.reasoningAt, delta.reasoning);
  if (text === undefined || reasoning === undefined) return { state, read: true };
  if (same && text === state.text && reasoning === state.reasoning) return { state, read: false };
  return { state: { ...base, text, reasoning }, read: false };
}

/** `s:…:end`: the response ended. One not seen yet is read (its row says what it was). */
export function applyEnd(state: StreamState | undefined, response: number): Step {
  if (!state || response > state.response) return { state, read: true };
  if (response < state.response || !state.live) return { state, read: false };
  return { state: { ...state, live: false }, read: false };
}

/** A row read: the newer response wins; within one response, the longer text and an end win. */
export function mergeRow(state: StreamState | undefined, row: StreamState | undefined) {
  if (!row) return state;
  if (!state || row.response > state.response) return row;
  if (row.response < state.response) return state;
  return {
    response: state.response,
    text: row.text.length > state.text.length ? row.text : state.text,
    reasoning: row.reasoning.length > state.reasoning.length ? row.reasoning : state.reasoning,
    live: state.live && row.live,
  };
}

/** `known` continued by `delta` written at offset `at`; undefined when text before `at` is missing. */
function extend(known: string, at: number, delta: string): string | undefined {
  if (known.length < at) return undefined;
  if (at + delta.length <= known.length) return known; // already known (a read got ahead)
  return known + delta.slice(known.length - at);
}
