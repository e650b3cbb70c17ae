// Records a model's answer in one statement: the `assistant` event keyed by the request it
// answers, the agent's token counters (only when the event is new), and the end of the live
// stream it replaces, with the feeds told, all in one implicit transaction. A retry whose first
// attempt committed (its reply lost) inserts nothing, counts nothing and reads that answer back.
import type { AgentRow } from "../agents/agents.sql.js";
import type { EventRow } from "../agents/events.sql.js";
import { scrubJson, scrubText } from "../agents/text.js";
import type { Db } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import { streamEndCtesText } from "../feed/publish.js";
import type { Usage } from "../llm/model.js";

export interface Answer {
  text: string;
  data: Record<string, unknown>;
  usage: Usage;
}

type AnswerRow = Omit<EventRow, "id" | "epoch"> & {
  id: string;
  epoch: string | null;
  fresh: boolean;
};

export async function recordAnswer(
  db: Db,
  agent: Pick<AgentRow, "id" | "tree_id">,
  answer: Answer,
  stamp: { key: string; epoch?: number },
): Promise<{ row: EventRow; fresh: boolean }> {
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
  ]);
  const found = rows[0];
  if (!found) throw new Error(`answer ${stamp.key} of agent ${agent.id} conflicted but is missing`);
  const { fresh, ...row } = found;
  delete (row as { told?: unknown }).told;
  return {
    row: { ...row, id: Number(row.id), epoch: row.epoch === null ? null : Number(row.epoch) },
    fresh,
  };
}

const RECORD_ANSWER: Prepared = {
  name: "warren_record_answer",
  text: `with ins as (
      insert into events (agent_id, tree_id, kind, content, data, key, epoch)
      values ($1::uuid, $2::uuid, 'assistant', $3::text, $4::jsonb, $5::text, $6::bigint)
      on conflict (agent_id, key) where key is not null do nothing
      returning *
    ), counted as (
      update agents set input_tokens = input_tokens + $7::bigint,
                        output_tokens = output_tokens + $8::bigint,
                        cached_tokens = cached_tokens + $9::bigint,
                        reasoning_tokens = reasoning_tokens + $10::bigint,
                        last_activity_at = now()
       where id = $1::uuid and exists (select 1 from ins)
    ), ${streamEndCtesText("$1", "$2")}
    select ins.*, true as fresh, (select count(*) from stream_told) as told from ins
    union all
    -- Refused by the key: the answer an earlier attempt recorded (committed before this began).
    select e.*, false, 0 from events e
     where e.agent_id = $1::uuid and e.key = $5::text and not exists (select 1 from ins)`,
};
