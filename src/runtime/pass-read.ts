// What one pass of the turn loop reads, in one statement: the agent's row, its parent's, the
// tail of its transcript from the last input on (the events that decide the next step) and what
// the model's context is built from (so a step that asks the model reads nothing more). The
// first pass of a run also reads the last answer and which of its calls have results, so a run
// with nothing dangling (nearly all) starts without another statement. It also says whether a
// feed watches the agent's stream, which the stream publisher would otherwise ask first.
import { agents, type AgentRow } from "../agents/agents.sql.js";
import { events, type EventRow } from "../agents/events.sql.js";
import { isUuid } from "../agents/refs.js";
import type { Db } from "../db/client.js";
import { rowFromJson } from "../db/json-row.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import type { ToolCall } from "../llm/model.js";
import {
  firstUserSql,
  newestSummarySql,
  summaryThroughSql,
  type ConversationRead,
  type SummaryRow,
} from "./context.js";

export interface PassRead {
  agent: AgentRow;
  /**
   * Undefined for a root. Without its `wait_status` and `system_prompt` (read as null): a pass
   * needs its parent's name and context, and a fan-in's parent carries a line for every child,
   * which each child's every pass would otherwise read.
   */
  parent: AgentRow | undefined;
  /** From the last `user` or `mail_in` event on (everything when there is none), oldest first. */
  tail: EventRow[];
  /** What the model's context is built from (context.ts), read with the tail: a pass that asks
   * the model needs no other read, and the context ends where the tail that chose the step does. */
  conversation: ConversationRead;
  /** First pass only: the agent's last answer has calls without a result (resume.ts). */
  dangling: boolean;
  /** A feed watched the agent's stream when this was read (stream-publisher.ts). */
  watched: boolean;
  /** This read also set the agent's activity to "thinking" (see THINKING). */
  thinking: boolean;
}

type Json = Record<string, unknown>;

/**
 * `epoch`: the turn's lease epoch (undefined: not leased); the "thinking" line is written only
 * while the row still carries it, as any of the turn's writes.
 */
export async function readPass(
  db: Db,
  agentId: string,
  first: boolean,
  epoch?: number,
): Promise<PassRead | undefined> {
  if (!isUuid(agentId)) return undefined;
  const [row] = await runPrepared<{
    agent: Json;
    parent: Json | null;
    events: Json[];
    tail_from: string;
    own_after: string;
    summary: (Omit<SummaryRow, "id"> & { id: string }) | null;
    first_user: string | null;
    last_calls: ToolCall[] | null;
    answered: string[] | null;
    watched: boolean;
    thinking: boolean;
  }>(db, first ? FIRST_PASS : PASS, [agentId, epoch ?? null]);
  if (!row) return undefined;
  const answered = new Set(row.answered ?? []);
  // One list of events serves both: the tail and the conversation overlap, nearly always whole.
  const read = row.events.map((event) => rowFromJson(events, event));
  const tailFrom = Number(row.tail_from);
  const ownAfter = Number(row.own_after);
  return {
    agent: rowFromJson(agents, row.agent),
    parent: row.parent ? rowFromJson(agents, row.parent) : undefined,
    tail: read.filter((e) => e.id >= tailFrom),
    conversation: {
      summary: row.summary ? { ...row.summary, id: Number(row.summary.id) } : undefined,
      firstUser: row.first_user ? Number(row.first_user) : undefined,
      own: read.filter((e) => e.id > ownAfter),
    },
    dangling: (row.last_calls ?? []).some((call) => !answered.has(call.id)),
    watched: row.watched,
    thinking: row.thinking,
  };
}

/** The kinds of event the model's context is made of; with TURN_ENDERS, those that decide a step. */
export const CONTEXT_KINDS = new Set(["user", "mail_in", "assistant", "tool_result"]);
/** Events that end a turn for good: woken later, the agent starts from new mail or input,
 * not by asking the model again about what failed or was interrupted. */
export const TURN_ENDERS = new Set(["interrupted", "error"]);
const DECIDING_KINDS_SQL = [...CONTEXT_KINDS, ...TURN_ENDERS].map((k) => `'${k}'`).join(", ");

// The conversation's part is context.ts's, without `before` (the same SQL pieces): the newest
// summary, the first `user` event, the events after the summary. Events are read once, from the
// earlier of the tail's start and the conversation's.
// THINKING: when the last event that decides the step is new input or a tool result, the model
// is asked next (nearly always: a /wait's result, a budget or a missing model ends the turn
// instead, and the end of the turn clears the line a moment later), so the read shows the agent
// "thinking" itself rather than leave it to a statement of its own. Only while the agent runs or
// waits, not interrupted, under the turn's epoch ($2).
const passText = (first: boolean) => `
  with thinking as (
    update agents set activity = 'thinking', lease_epoch = coalesce($2::bigint, lease_epoch)
     where id = $1::uuid and state in ('running', 'waiting') and interrupt_requested_at is null
       and activity is distinct from 'thinking'
       and ($2::bigint is null or lease_epoch = $2::bigint)
       and (select kind from events
             where agent_id = $1::uuid and kind in (${DECIDING_KINDS_SQL}) and rewound_at is null
             order by id desc limit 1) in ('user', 'mail_in', 'tool_result')
    returning 1
  ), s as (
    ${newestSummarySql("$1::uuid")}
  ), b as (
    select coalesce((select id from events
                      where agent_id = $1::uuid and kind in ('user', 'mail_in')
                        and rewound_at is null
                      order by id desc limit 1), 0) as tail_from,
           ${summaryThroughSql("s")} as own_after
  )
  select to_jsonb(a) as agent, to_jsonb(p) - '{wait_status,system_prompt}'::text[] as parent,
         b.tail_from, b.own_after,
         (select to_jsonb(s) from s) as summary,
         ${firstUserSql("$1::uuid")} as first_user,
         (select coalesce(jsonb_agg(to_jsonb(e) order by e.id), '[]')
            from events e
           where e.agent_id = a.id and e.id >= least(b.tail_from, b.own_after + 1)
             and e.rewound_at is null) as events,
         exists (select 1 from feed_watchers w
                  where w.tree_id = a.tree_id and w.expires_at > now()
                    and a.id = any(w.streams)) as watched,
         exists (select 1 from thinking) as thinking
         ${
           first
             ? `, l.data->'tool_calls' as last_calls,
                (select array_agg(r.data->>'tool_call_id') from events r
                  where r.agent_id = a.id and r.kind = 'tool_result' and r.id > l.id
                    and r.rewound_at is null) as answered`
             : ""
         }
    from agents a
    cross join b
    left join agents p on p.id = a.parent_id
    ${
      first
        ? `left join lateral (select id, data from events
                               where agent_id = a.id and kind = 'assistant' and rewound_at is null
                               order by id desc limit 1) l on true`
        : ""
    }
   where a.id = $1::uuid`;

const PASS: Prepared = { name: "warren_pass", text: passText(false) };
const FIRST_PASS: Prepared = { name: "warren_first_pass", text: passText(true) };
