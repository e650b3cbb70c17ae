// Records a model's answer in one statement: the `assistant` event keyed by the request it
// answers, the scrollback line (`tool_call`) of each call it makes, the agent's token counters
// and the activity line of those calls (only when the event is new), the end of the live stream
// it replaces, with the feeds told, and for an answer without calls the end of the turn, all in
// one implicit transaction. A retry whose first attempt committed (its reply lost) inserts
// nothing, counts nothing, ends nothing and reads that answer back; an answer is never there
// without its lines.
import type { AgentRow } from "../agents/agents.sql.js";
import type { EventRow } from "../agents/events.sql.js";
import { toolCallKeySql } from "../agents/event-keys.js";
import { scrubJson, scrubText } from "../agents/text.js";
import type { Db } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import { streamEndCtesText } from "../feed/publish.js";
import { agentChannel } from "../bus/channels.js";
import type { ToolCall, Usage } from "../llm/model.js";

export interface Answer {
  text: string;
  data: Record<string, unknown>;
  usage: Usage;
  /** The calls the answer makes, each shown as a `tool_call` line. */
  calls: ToolCall[];
  /** The agent's activity line from now on (its calls about to run); null: left as it is. */
  activity: string | null;
  /** The event that started the turn, when this is its first answer: the turn is counted. */
  turnStart?: number;
  /**
   * The answer ends the turn (it makes no calls): the statement that records it also ends the
   * turn as takePendingMail's first step does, under the lease of `fence`.
   */
  endsTurn?: boolean;
}

/**
 * How the statement ended the turn when the answer asked it to: "idle", "pending" (mail is
 * waiting: nothing changed), "lost" (the lease is gone); null when it did not (no end asked, or
 * a retry found the answer recorded: the caller ends the turn itself).
 */
export type AnswerEnd = "idle" | "pending" | "lost" | null;

type AnswerRow = Omit<EventRow, "id" | "epoch"> & {
  id: string;
  epoch: string | null;
  fresh: boolean;
  ended: AnswerEnd;
};

export async function recordAnswer(
  db: Db,
  agent: Pick<AgentRow, "id" | "tree_id">,
  answer: Answer,
  stamp: { key: string; epoch?: number; owner?: string },
): Promise<{ row: EventRow; fresh: boolean; ended: AnswerEnd }> {
  const { usage } = answer;
  // The epoch is checked by the events_fence trigger on the insert, as for any turn's event.
  const rows = await runPrepared<AnswerRow>(db, RECORD_ANSWER, [
    agent.id,
    agent.tree_id,
    scrubText(answer.text),
    JSON.stringify(scrubJson(answer.data)),
    stamp.key,
    stamp.epoch ?? null,
    usage.inputTokens,
    usage.outputTokens,
    usage.cachedTokens ?? 0,
    usage.reasoningTokens ?? 0,
    // Model text may hold NUL or lone surrogates, which Postgres cannot store.
    answer.calls.map((call) => scrubText(`${call.name}(${call.arguments})`)),
    answer.calls.map((call) =>
      JSON.stringify(
        scrubJson({ tool_call_id: call.id, name: call.name, arguments: call.arguments }),
      ),
    ),
    answer.calls.map((call) => call.id),
    answer.activity,
    answer.turnStart ?? null,
    answer.endsTurn === true,
    stamp.owner ?? null,
  ]);
  const found = rows[0];
  if (!found) throw new Error(`answer ${stamp.key} of agent ${agent.id} conflicted but is missing`);
  const { fresh, ended, ...row } = found;
  delete (row as { told?: unknown }).told;
  return {
    row: { ...row, id: Number(row.id), epoch: row.epoch === null ? null : Number(row.epoch) },
    fresh,
    ended,
  };
}

const RECORD_ANSWER: Prepared = {
  name: "warren_record_answer",
  text: `with ins as (
      insert into events (agent_id, tree_id, kind, content, data, key, epoch)
      values ($1::uuid, $2::uuid, 'assistant', $3::text, $4::jsonb, $5::text, $6::bigint)
      on conflict (agent_id, key) where key is not null do nothing
      returning *
    ), calls as (
      -- Keyed by the answer and call id like every call's line; a call id the response repeats
      -- gets one line.
      insert into events (agent_id, tree_id, kind, content, data, key, epoch)
      select $1::uuid, $2::uuid, 'tool_call', c.content, c.data,
             ${toolCallKeySql("ins.id", "c.id")}, $6::bigint
        from ins, unnest($11::text[], $12::jsonb[], $13::text[]) with ordinality
                  as c(content, data, id, n)
       order by c.n
      on conflict (agent_id, key) where key is not null do nothing
    ), ${streamEndCtesText("$1", "$2")}
    -- Called once the answer is in: its counters and activity, and the end of the turn when
    -- asked (migrations/0014_answer_ends_turn.sql).
    select ins.*, true as fresh, (select count(*) from stream_told) as told,
           warren_answered($1::uuid, $7::bigint, $8::bigint, $9::bigint, $10::bigint, $14::text,
                           $15::bigint, $16::boolean, $17::text, $6::bigint,
                           '${agentChannel("")}') as ended
      from ins
    union all
    -- Refused by the key: the answer an earlier attempt recorded (committed before this began).
    select e.*, false, 0, null from events e
     where e.agent_id = $1::uuid and e.key = $5::text and not exists (select 1 from ins)`,
};
