// The scrollback's entries with each tool call and its result made one group: the result leaves
// its own place (after every call of its response) and goes beneath its call, so parallel calls
// read in call order, each with its outcome. A fork call's `fork` event says what its result
// says: it goes. Pure and linear: one pass to index the results, one to build the list.
import type { EventRow } from "../../agents/events.sql.js";
import type { ScrollEntry } from "./entry-lines.js";

const callId = (event: EventRow): string | undefined => {
  const id = event.data?.tool_call_id;
  return typeof id === "string" && id !== "" ? id : undefined;
};

/**
 * `entries` (events in order, then what is live) with calls grouped. `spinner`: the glyph a call
 * still without a result shows while the agent is busy (undefined: it is not, nothing shows).
 */
export function groupCalls(entries: readonly ScrollEntry[], spinner?: string): ScrollEntry[] {
  const calls = new Set<string>();
  const results = new Map<string, EventRow>();
  for (const entry of entries) {
    if (entry.kind !== "event") continue;
    const id = callId(entry.event);
    if (id === undefined) continue;
    if (entry.event.kind === "tool_call") calls.add(id);
    // The first result of a call is its result (a replay after a crash records none twice).
    else if (entry.event.kind === "tool_result" && !results.has(id)) results.set(id, entry.event);
  }
  if (calls.size === 0) return entries as ScrollEntry[];
  const out: ScrollEntry[] = [];
  for (const entry of entries) {
    if (entry.kind !== "event") {
      out.push(entry);
      continue;
    }
    const event = entry.event;
    const id = callId(event);
    if (id === undefined || !calls.has(id)) {
      out.push(entry);
      continue;
    }
    if (event.kind === "tool_call") {
      const result = results.get(id);
      if (result) out.push({ kind: "call", call: event, result });
      else out.push({ kind: "call", call: event, ...(spinner ? { spinner } : {}) });
    } else if (event.kind === "tool_result" && results.get(id) !== event) {
      // A second result for one call (never written; shown rather than hidden if it were).
      out.push(entry);
    }
    // The call's result is beneath it; its `fork` event is its result's news, said there.
  }
  return out;
}
