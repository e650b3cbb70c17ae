// The stream publisher: a model response's deltas, sent to the feeds watching the agent. A delta
// goes out at once as a hint carrying the text (`d:`, no row write) — one statement in flight at
// a time, so what comes meanwhile goes in the next one — while the row (the truth, for a feed
// that joins late or misses a hint) is written at most once per `intervalMs`, as before.
// Every statement checks the turn's lease epoch and that a feed watches the agent's stream.
import { treeChannel } from "../bus/channels.js";
import type { Fence } from "../agents/errors.js";
import type { Db } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import { deltaPayloadTail, MAX_HINTED_DELTA } from "./stream-hints.js";

/** At most one row write per this many ms per agent (~20 per second). */
export const STREAM_INTERVAL_MS = 50;
/** At most one hint-only statement per this many ms per agent (bounds a fast model's cost). */
export const DELTA_INTERVAL_MS = 10;
/** The row catches up this many intervals after the last delta when no hint brought it along. */
const QUIET_INTERVALS = 4;
/**
 * While no feed watches the agent, a row write (which finds no watcher and writes nothing) is
 * tried once per this many intervals: 200 unwatched streams ask 800 times a second, not 4,000.
 * A feed that starts watching sees the text up to this much later (250 ms by default).
 */
const UNWATCHED_INTERVALS = 5;

// Shared by both statements. $1 agent, $2 tree, $3 the turn's lease epoch (null: not leased; a
// stale one writes and sends nothing and says so: held = false).
const FENCE_AND_WATCHER = `
  f as (
    select $3::bigint is null
        or exists (select 1 from agents where id = $1::uuid and lease_epoch = $3::bigint) as held
  ), w as (
    select 1 from feed_watchers
     where tree_id = $2::uuid and expires_at > now() and $1::uuid = any(streams)
       and (select held from f)
     limit 1
  )`;

// $4 channel, $5 response, $6 the payload after `d:<agent>:<response>:`.
const SEND_DELTA: Prepared = {
  name: "warren_stream_delta",
  text: `
    with ${FENCE_AND_WATCHER}, n as (
      select pg_notify($4::text, 'd:' || $1::text || ':' || $5::text || ':' || $6::text) from w
    )
    select (select held from f) as held, (select count(*) from n)::int as sent, null as response`,
};

// $4 channel, $5 response (null: a new one, numbered by this transaction), $6 text, $7 reasoning,
// $8 the payload after `w:<agent>:<response>:`.
const WRITE_ROW: Prepared = {
  name: "warren_stream_row",
  text: `
    with ${FENCE_AND_WATCHER}, u as (
      insert into agent_streams as s (agent_id, tree_id, text, reasoning, live, updated_at, response)
      select $1::uuid, $2::uuid, $6::text, $7::text, true, now(),
             coalesce($5::bigint, pg_current_xact_id()::text::bigint)
        from w
      on conflict (agent_id) do update
         set text = excluded.text, reasoning = excluded.reasoning, live = true,
             updated_at = now(), response = excluded.response
      returning agent_id, response
    ), n as (
      select pg_notify($4::text, 'w:' || agent_id::text || ':' || response::text || ':' || $8::text)
        from u
    )
    select (select held from f) as held, (select count(*) from n)::int as sent,
           (select response::text from u) as response,
           -- The row is a cosmetic copy a crash may lose: its commit need not wait for the WAL
           -- flush (the hint-only statement writes no WAL and never waits either).
           set_config('synchronous_commit', 'off', true) as commit_mode`,
};

export interface StreamPublisher {
  onText(delta: string): void;
  onReasoning(delta: string): void;
  /** Stops publishing and waits for a statement in flight; call before `endStream`. */
  settle(): Promise<void>;
  /** The text and reasoning streamed so far (kept when the person interrupts the response). */
  streamed(): { text: string; reasoning: string };
}

/**
 * Publishes a response's deltas (see the file comment). Until a row write finds a watching feed,
 * nothing but row writes is tried (once per interval, as when no one watches): a tree no feed
 * watches costs what it did before hints carried text.
 */
export function createStreamPublisher(
  db: Db,
  agent: { id: string; tree_id: string },
  options: {
    fence?: Fence;
    onFenced?: () => void;
    intervalMs?: number;
    /** A read just now found no feed watching: the first row write waits its unwatched turn. */
    unwatched?: boolean;
  } = {},
): StreamPublisher {
  const intervalMs = options.intervalMs ?? STREAM_INTERVAL_MS;
  const epoch = options.fence?.epoch ?? null;
  const channel = treeChannel(agent.tree_id);
  let text = "";
  let reasoning = "";
  // How much the watching feeds were sent, and the row holds (by length: both only grow).
  let sentText = 0;
  let sentReasoning = 0;
  let rowText = 0;
  let rowReasoning = 0;
  /** agent_streams.response once a row write found a watcher; undefined: nobody watches (yet). */
  let response: string | undefined;
  // As if a row write had just found no watcher, when a read just now said so.
  let lastRow = options.unwatched ? Date.now() : -Infinity;
  let lastDelta = -Infinity;
  let lastInput = -Infinity;
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  let inflight: Promise<void> | undefined;

  const unsent = () => text.length - sentText + reasoning.length - sentReasoning;
  const rowBehind = () => text.length > rowText || reasoning.length > rowReasoning;

  /**
   * The next statement (and when), or nothing to do. Deltas go out as hints at once; the row is
   * written with one when a write is due (no extra statement), else once the stream has been
   * quiet for a few intervals — so a stream writes its row less often than before, when it
   * wrote at every interval. The row only serves a feed that joins late or lost a hint.
   */
  const next = (now: number): { kind: "row" | "delta"; at: number } | undefined => {
    const rowAt = lastRow + (response === undefined ? UNWATCHED_INTERVALS : 1) * intervalMs;
    if (unsent() === 0) {
      return rowBehind()
        ? { kind: "row", at: Math.max(rowAt, lastInput + QUIET_INTERVALS * intervalMs) }
        : undefined;
    }
    if (response === undefined || unsent() > MAX_HINTED_DELTA || rowAt <= now) {
      return { kind: "row", at: rowAt };
    }
    return { kind: "delta", at: lastDelta + DELTA_INTERVAL_MS };
  };

  const run = (kind: "row" | "delta") => {
    const now = Date.now();
    // A delta too big for a NOTIFY payload is not sent: the row write's hint then says only how
    // long the text now is, and a feed that knows less reads the row.
    const hinted = unsent() <= MAX_HINTED_DELTA;
    const tail = deltaPayloadTail({
      textAt: hinted ? sentText : text.length,
      reasoningAt: hinted ? sentReasoning : reasoning.length,
      text: hinted ? text.slice(sentText) : "",
      reasoning: hinted ? reasoning.slice(sentReasoning) : "",
    });
    const lengths = { text: text.length, reasoning: reasoning.length };
    const statement =
      kind === "row"
        ? runPrepared<Result>(db, WRITE_ROW, [
            agent.id,
            agent.tree_id,
            epoch,
            channel,
            response ?? null,
            text,
            reasoning,
            tail,
          ])
        : runPrepared<Result>(db, SEND_DELTA, [
            agent.id,
            agent.tree_id,
            epoch,
            channel,
            response!,
            tail,
          ]);
    if (kind === "row") lastRow = now;
    else lastDelta = now;
    // Sent, unwatched or failed, these deltas are done with: a feed that comes later, or missed
    // them, reads the row, which the next row write brings up to date.
    sentText = lengths.text;
    sentReasoning = lengths.reasoning;
    if (kind === "row") {
      rowText = lengths.text;
      rowReasoning = lengths.reasoning;
    }
    inflight = statement
      .then(
        ([row]) => {
          // Another worker claimed the agent: this model call is abandoned at once.
          if (row && !row.held) options.onFenced?.();
          if (!row || row.sent === 0)
            response = undefined; // nobody watches: row writes only
          else if (kind === "row") response = row.response ?? undefined;
        },
        () => {
          // Dropped, as before hints carried text: the next delta starts over with a row write.
          response = undefined;
        },
      )
      .finally(() => {
        inflight = undefined;
        schedule();
      });
  };

  // Recomputed on every delta: a quiet-stream row write waiting on its timer gives way to a hint.
  const schedule = () => {
    if (inflight || settled) return;
    clearTimeout(timer);
    timer = undefined;
    const now = Date.now();
    const step = next(now);
    if (!step) return;
    if (step.at <= now) return run(step.kind);
    timer = setTimeout(() => {
      timer = undefined;
      schedule();
    }, step.at - now);
  };

  return {
    onText(delta) {
      text += delta;
      lastInput = Date.now();
      schedule();
    },
    onReasoning(delta) {
      reasoning += delta;
      lastInput = Date.now();
      schedule();
    },
    streamed: () => ({ text, reasoning }),
    async settle() {
      settled = true;
      clearTimeout(timer);
      await inflight;
    },
  };
}

interface Result {
  held: boolean;
  sent: number;
  response: string | null;
}
