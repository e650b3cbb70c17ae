// What one pass of the turn loop reads, in one statement: the agent's row, its parent's, and the
// tail of its transcript from the last input on (the events that decide the next step). The
// first pass of a run also reads the last answer and which of its calls have results, so a run
// with nothing dangling (nearly all) starts without another statement.
import { agents, type AgentRow } from "../agents/agents.sql.js";
import { events, type EventRow } from "../agents/events.sql.js";
import { isUuid } from "../agents/refs.js";
import type { Db } from "../db/client.js";
import { rowFromJson } from "../db/json-row.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import type { ToolCall } from "../llm/model.js";

export interface PassRead {
  agent: AgentRow;
  /** Undefined for a root. */
  parent: AgentRow | undefined;
  /** From the last `user` or `mail_in` event on (everything when there is none), oldest first. */
  tail: EventRow[];
  /** First pass only: the agent's last answer has calls without a result (resume.ts). */
  dangling: boolean;
}

type Json = Record<string, unknown>;

export async function readPass(
  db: Db,
  agentId: string,
  first: boolean,
): Promise<PassRead | undefined> {
  if (!isUuid(agentId)) return undefined;
  const [row] = await runPrepared<{
    agent: Json;
    parent: Json | null;
    tail: Json[];
    last_calls: ToolCall[] | null;
    answered: string[] | null;
  }>(db, first ? FIRST_PASS : PASS, [agentId]);
  if (!row) return undefined;
  const answered = new Set(row.answered ?? []);
  return {
    agent: rowFromJson(agents, row.agent),
    parent: row.parent ? rowFromJson(agents, row.parent) : undefined,
    tail: row.tail.map((event) => rowFromJson(events, event)),
    dangling: (row.last_calls ?? []).some((call) => !answered.has(call.id)),
  };
}

const passText = (first: boolean) => `
  select to_jsonb(a) as agent, to_jsonb(p) as parent,
         (select coalesce(jsonb_agg(to_jsonb(e) order by e.id), '[]')
            from events e
           where e.agent_id = a.id
             and e.id >= coalesce((select id from events
                                    where agent_id = a.id and kind in ('user', 'mail_in')
                                    order by id desc limit 1), 0)) as tail
         ${
           first
             ? `, l.data->'tool_calls' as last_calls,
                (select array_agg(r.data->>'tool_call_id') from events r
                  where r.agent_id = a.id and r.kind = 'tool_result' and r.id > l.id) as answered`
             : ""
         }
    from agents a
    left join agents p on p.id = a.parent_id
    ${
      first
        ? `left join lateral (select id, data from events
                               where agent_id = a.id and kind = 'assistant'
                               order by id desc limit 1) l on true`
        : ""
    }
   where a.id = $1::uuid`;

const PASS: Prepared = { name: "warren_pass", text: passText(false) };
const FIRST_PASS: Prepared = { name: "warren_first_pass", text: passText(true) };
