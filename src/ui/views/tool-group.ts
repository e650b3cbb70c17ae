// The scrollback's entries with each tool call and its result made one group: the result leaves
// its own place (after every call of its response) and goes beneath its call, so parallel calls
// read in call order, each with its outcome. The `fork` event of a child a fork call made says
// what that call's result says: it goes (a person's /fork keeps its notice, having no call). Pure
// and linear: one pass to index the results, one to build the list.
import type { EventRow } from "../../agents/events.sql.js";
import type { ScrollEntry } from "./entry-lines.js";
import { parseObject } from "../../text/json.js";

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
  /** Children made by fork calls shown here: their `fork` events repeat the calls' results. */
  const forked = new Set<string>();
  for (const entry of entries) {
    if (entry.kind !== "event") continue;
    const id = callId(entry.event);
    if (id === undefined) continue;
    if (entry.event.kind === "tool_call") calls.add(id);
    // The first result of a call is its result (a replay after a crash records none twice).
    else if (entry.event.kind === "tool_result" && !results.has(id)) {
      results.set(id, entry.event);
      const child = forkedChild(entry.event);
      if (child) forked.add(child);
    }
  }
  if (calls.size === 0) return entries as ScrollEntry[];
  const out: ScrollEntry[] = [];
  for (const entry of entries) {
    if (entry.kind !== "event") {
      out.push(entry);
      continue;
    }
    const event = entry.event;
    if (event.kind === "fork" && forked.has(String(event.data?.agent_id))) continue;
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

/** Results are immutable rows: each fork result's child is read from its JSON once. */
const childOf = new WeakMap<EventRow, string | null>();

/** The child a fork call's result names, if it made one. */
function forkedChild(result: EventRow): string | undefined {
  if (result.data?.name !== "fork") return undefined;
  let child = childOf.get(result);
  if (child === undefined) {
    const id = parseObject(result.content)?.agent_id;
    child = typeof id === "string" ? id : null;
    childOf.set(result, child);
  }
  return child ?? undefined;
}
