// The stream hints on a tree channel: what the stream publisher sends and the feed parses. Small
// deltas ride in the payload so a feed can show them without a read; the row stays the truth.
//
//   d:<agent>:<response>:<textAt>:<reasoningAt>:<reasoningLength>:<reasoning delta><text delta>
//       deltas only (no row write): the text grew from textAt, the reasoning from reasoningAt
//   w:<agent>:<response>:<textAt>:<reasoningAt>:<reasoningLength>:<reasoning delta><text delta>
//       the same, and the row was written in the same statement (it holds at least all of it)
//   s:<agent>:<response>:end    the response ended (live = false)
//   s:<agent>                   something changed: read the row
//
// Offsets and lengths count UTF-16 code units (JavaScript string lengths), on both sides.

/** NOTIFY payloads must stay under 8000 bytes; a UTF-16 unit is at most 3 bytes of UTF-8. */
export const MAX_HINTED_DELTA = 2000;

export interface StreamDelta {
  agentId: string;
  /** The response the text belongs to (agent_streams.response). */
  response: number;
  /** The text's length before `text` (the offset it continues from). */
  textAt: number;
  reasoningAt: number;
  text: string;
  reasoning: string;
  /** The row was written with it (a `w:` hint). */
  written: boolean;
}

export type StreamHint =
  | ({ kind: "delta" } & StreamDelta)
  | { kind: "end"; agentId: string; response: number }
  | { kind: "stream"; agentId: string };

/** The payload after `<tag>:<agent>:<response>:` (the SQL that writes the row fills those in). */
export function deltaPayloadTail(delta: Omit<StreamDelta, "agentId" | "response" | "written">) {
  return `${delta.textAt}:${delta.reasoningAt}:${delta.reasoning.length}:${delta.reasoning}${delta.text}`;
}

/** Parses a `d:`, `w:` or `s:` payload; undefined for anything else or anything malformed. */
export function parseStreamHint(payload: string): StreamHint | undefined {
  const tag = payload.slice(0, 2);
  if (tag !== "d:" && tag !== "w:" && tag !== "s:") return undefined;
  const fields: string[] = [];
  let at = 2;
  // The delta text may hold colons: split only the fixed fields off the front.
  const count = tag === "s:" ? 2 : 5;
  while (fields.length < count) {
    const next = payload.indexOf(":", at);
    if (next < 0) break;
    fields.push(payload.slice(at, next));
    at = next + 1;
  }
  const rest = payload.slice(at);
  if (tag === "s:") {
    if (fields.length === 0) return rest ? { kind: "stream", agentId: rest } : undefined;
    const response = Number(fields[1]);
    if (rest !== "end" || !fields[0] || !Number.isSafeInteger(response)) return undefined;
    return { kind: "end", agentId: fields[0], response };
  }
  if (fields.length < count || !fields[0]) return undefined;
  const [response, textAt, reasoningAt, reasoningLength] = fields.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
  ];
  const numbers = [response, textAt, reasoningAt, reasoningLength];
  if (!numbers.every((n) => Number.isSafeInteger(n) && n >= 0)) return undefined;
  if (reasoningLength > rest.length) return undefined;
  return {
    kind: "delta",
    agentId: fields[0],
    response,
    textAt,
    reasoningAt,
    reasoning: rest.slice(0, reasoningLength),
    text: rest.slice(reasoningLength),
    written: tag === "w:",
  };
}
