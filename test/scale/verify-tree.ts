// What a finished scale-out run must show in the database: every agent once and idle, every
// scripted answer recorded once (a call whose answer was lost to a crash or a lease takeover may
// be made again, and is counted), every mail once and consumed once by its recipient's wait.
import type pg from "pg";
import {
  expectedStages,
  parentName,
  reportOf,
  ROOT_NAME,
  treeNames,
  type StageRecord,
  type TreeShape,
} from "./tree-script.js";

export interface Verdict {
  /** Empty when the run kept every promise. */
  problems: string[];
  /** Model requests made again for a stage already answered (the answer was lost in a crash). */
  replays: number;
  /** Calls answered `interrupted` after a crash and called again by the model. */
  retries: number;
}

export interface VerifyOptions {
  treeId: string;
  shape: TreeShape;
  stageLog: StageRecord[];
  /** Agents the killed worker held (reported beside the replays). */
  victims: string[];
}

/** The answers an agent's scripted calls get, by the tool of their first call (text: none). */
function answersWanted(shape: TreeShape, name: string): Record<string, number> {
  const stages = expectedStages(shape, name);
  const parent = stages.includes("after:fork");
  return {
    fork: parent ? 1 : 0,
    wait: parent ? 1 : 0,
    send: name === ROOT_NAME ? 0 : 1,
    text: 1,
  };
}

/** Problems are listed by kind, each kind capped, so a broken run still prints a readable report. */
export async function verifyTree(client: pg.Client, options: VerifyOptions): Promise<Verdict> {
  const problems: string[] = [];
  const note = (kind: string, items: string[]) => {
    if (items.length === 0) return;
    const shown = items.slice(0, 8).join("; ");
    problems.push(`${kind} (${items.length}): ${shown}${items.length > 8 ? "; …" : ""}`);
  };
  const names = treeNames(options.shape);

  // Agents: exactly the scripted names, each once, under the right parent, all idle.
  const agentRows = await client.query<{
    id: string;
    name: string;
    parent: string | null;
    state: string;
    turns: number;
    fork_answers: number;
    fork_retries: number;
    wait_answers: number;
    send_answers: number;
    send_retries: number;
    text_answers: number;
    errors: string[] | null;
  }>(
    // Answers by their first call's tool (or none: a text answer); retries are the interrupted
    // results that made the model call the same tool again.
    `select a.id, a.name, p.name as parent, a.state, a.turns,
            (select count(*)::int from events e where e.agent_id = a.id and e.kind = 'assistant'
                and e.data->'tool_calls'->0->>'name' = 'fork') as fork_answers,
            (select count(distinct e.id)::int from events e where e.agent_id = a.id
                and e.kind = 'assistant' and e.data->'tool_calls'->0->>'name' = 'fork'
                and exists (select 1 from events r where r.agent_id = a.id and r.id < e.id
                  and r.kind = 'tool_result' and r.data->>'interrupted' = 'true'
                  and r.data->>'name' = 'fork')) as fork_retries,
            (select count(*)::int from events e where e.agent_id = a.id and e.kind = 'assistant'
                and e.data->'tool_calls'->0->>'name' = 'wait') as wait_answers,
            (select count(*)::int from events e where e.agent_id = a.id and e.kind = 'assistant'
                and e.data->'tool_calls'->0->>'name' = 'send') as send_answers,
            (select count(distinct e.id)::int from events e where e.agent_id = a.id
                and e.kind = 'assistant' and e.data->'tool_calls'->0->>'name' = 'send'
                and exists (select 1 from events r where r.agent_id = a.id and r.id < e.id
                  and r.kind = 'tool_result' and r.data->>'interrupted' = 'true'
                  and r.data->>'name' = 'send')) as send_retries,
            (select count(*)::int from events e where e.agent_id = a.id and e.kind = 'assistant'
                and coalesce(jsonb_array_length(e.data->'tool_calls'), 0) = 0) as text_answers,
            (select array_agg(e.content) from events e where e.agent_id = a.id and e.kind = 'error') as errors
       from agents a left join agents p on p.id = a.parent_id
      where a.tree_id = $1`,
    [options.treeId],
  );
  const byName = new Map<string, (typeof agentRows.rows)[number][]>();
  for (const row of agentRows.rows) byName.set(row.name, [...(byName.get(row.name) ?? []), row]);
  note(
    "missing agents",
    names.filter((n) => !byName.has(n)),
  );
  note(
    "agents forked more than once",
    [...byName].filter(([, rows]) => rows.length > 1).map(([n, rows]) => `${n} ×${rows.length}`),
  );
  note(
    "unexpected agents",
    [...byName.keys()].filter((n) => !names.includes(n)),
  );
  const rows = agentRows.rows;
  note(
    "agents under the wrong parent",
    rows.filter((r) => r.parent !== (parentName(r.name) ?? null)).map((r) => r.name),
  );
  note(
    "agents not idle at the end",
    rows.filter((r) => r.state !== "idle").map((r) => `${r.name} ${r.state}`),
  );
  note(
    "error events",
    rows.flatMap((r) => (r.errors ?? []).map((e) => `${r.name}: ${e.slice(0, 200)}`)),
  );
  // A turn restarted by the next worker (after a crash or a takeover) is counted again.
  note(
    "turns not counted",
    rows.filter((r) => r.turns < 1).map((r) => `${r.name} ${r.turns}`),
  );

  // Model calls: each scripted stage once; repeats and retries only where the killed worker was.
  const stages = new Map<string, string[]>();
  for (const { agent, stage } of options.stageLog)
    stages.set(agent, [...(stages.get(agent) ?? []), stage]);
  let replays = 0;
  let retries = 0;
  const wrongCalls: string[] = [];
  const wrongAnswers: string[] = [];
  for (const name of names) {
    const seen = stages.get(name) ?? [];
    const expected = expectedStages(options.shape, name);
    const plain = seen.filter((s) => !s.startsWith("retry:"));
    const distinct = [...new Set(plain)];
    // A call is made again only when its answer was never recorded: the worker died (kill -9) or
    // lost its lease (a takeover after a late heartbeat) in between. Counted, not forbidden.
    replays += plain.length - distinct.length;
    retries += seen.length - plain.length;
    const sameSet =
      distinct.length === expected.length && expected.every((s) => distinct.includes(s));
    if (!sameSet) wrongCalls.push(`${name}: ${seen.join(",")}`);
    // Each scripted answer is recorded once; a call answered `interrupted` adds one re-issue.
    const row = byName.get(name)?.[0];
    if (!row) continue;
    const want = answersWanted(options.shape, name);
    const got = {
      fork: row.fork_answers - row.fork_retries,
      wait: row.wait_answers,
      send: row.send_answers - row.send_retries,
      text: row.text_answers,
    };
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      wrongAnswers.push(`${name}: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
    }
  }
  note("model calls not as scripted", wrongCalls);
  note("answers not recorded once each", wrongAnswers);

  // Mail: one report per non-root agent to its parent, no duplicate, consumed once by the
  // parent's fan-in wait (consumed_by_event is that wait's tool_result).
  const mailRows = await client.query<{
    sender: string | null;
    recipient: string | null;
    body: string;
    consumed: boolean;
    by_recipient: boolean | null;
    by_kind: string | null;
    by_tool: string | null;
  }>(
    `select f.name as sender, t.name as recipient, m.body, m.consumed_at is not null as consumed,
            e.agent_id = m.to_id as by_recipient, e.kind as by_kind, e.data->>'name' as by_tool
       from mail m
       left join agents f on f.id = m.from_id
       left join agents t on t.id = m.to_id
       left join events e on e.id = m.consumed_by_event
      where m.tree_id = $1`,
    [options.treeId],
  );
  const letters = new Map<string, number>();
  for (const m of mailRows.rows) {
    const key = `${m.sender}→${m.recipient}: ${m.body}`;
    letters.set(key, (letters.get(key) ?? 0) + 1);
  }
  const wanted = names
    .filter((n) => n !== ROOT_NAME)
    .map((n) => `${n}→${parentName(n)}: ${reportOf(options.shape, n)}`);
  note(
    "mail missing",
    wanted.filter((k) => !letters.has(k)),
  );
  note(
    "mail sent twice",
    [...letters].filter(([, n]) => n > 1).map(([k, n]) => `${k} ×${n}`),
  );
  note(
    "unexpected mail",
    [...letters.keys()].filter((k) => !wanted.includes(k)),
  );
  note(
    "mail not consumed once by its recipient's wait",
    mailRows.rows
      .filter(
        (m) =>
          !m.consumed || !m.by_recipient || m.by_kind !== "tool_result" || m.by_tool !== "wait",
      )
      .map((m) => `${m.sender}→${m.recipient}`),
  );
  const twice = [...letters].find(([, n]) => n > 1);
  if (twice)
    problems.push(
      `for example ${await timelineOf(client, options.treeId, twice[0].split("→")[0]!)}`,
    );
  return { problems, replays, retries };
}

/** An agent's transcript in one line per event, to explain a problem (first 40 events). */
export async function timelineOf(client: pg.Client, treeId: string, name: string): Promise<string> {
  const rows = await client.query<{ line: string }>(
    `select to_char(e.created_at, 'HH24:MI:SS.MS') || ' ' || e.kind || ' ' ||
            coalesce(e.data->>'name', '') || ' ' || left(replace(e.content, E'\\n', ' '), 120) as line
       from events e join agents a on a.id = e.agent_id
      where a.tree_id = $1 and a.name = $2 order by e.id limit 40`,
    [treeId, name],
  );
  return `${name}:\n    ${rows.rows.map((r) => r.line).join("\n    ")}`;
}
