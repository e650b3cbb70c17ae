// What a finished scale-out run must show in the database: every agent once and idle, every turn
// and model call once (a crash may repeat only what the killed worker held), every mail once.
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
  /** Agents the killed worker held: the only ones allowed a repeated model call or turn. */
  victims: string[];
}

/** Problems are listed by kind, each kind capped, so a broken run still prints a readable report. */
export async function verifyTree(client: pg.Client, options: VerifyOptions): Promise<Verdict> {
  const problems: string[] = [];
  const note = (kind: string, items: string[]) => {
    if (items.length === 0) return;
    const shown = items.slice(0, 8).join("; ");
    problems.push(`${kind} (${items.length}): ${shown}${items.length > 8 ? "; …" : ""}`);
  };
  const victims = new Set(options.victims);
  const names = treeNames(options.shape);

  // Agents: exactly the scripted names, each once, under the right parent, all idle.
  const agentRows = await client.query<{
    id: string;
    name: string;
    parent: string | null;
    state: string;
    turns: number;
    assistants: number;
    errors: string[] | null;
  }>(
    `select a.id, a.name, p.name as parent, a.state, a.turns,
            (select count(*)::int from events e where e.agent_id = a.id and e.kind = 'assistant') as assistants,
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
  note(
    "turns counted more than once",
    rows
      .filter((r) => r.turns !== 1 && !(victims.has(r.name) && r.turns === 2))
      .map((r) => `${r.name} ${r.turns}`),
  );

  // Model calls: each scripted stage once; repeats and retries only where the killed worker was.
  const stages = new Map<string, string[]>();
  for (const { agent, stage } of options.stageLog)
    stages.set(agent, [...(stages.get(agent) ?? []), stage]);
  let replays = 0;
  let retries = 0;
  const wrongCalls: string[] = [];
  const wrongAssistants: string[] = [];
  for (const name of names) {
    const seen = stages.get(name) ?? [];
    const expected = expectedStages(options.shape, name);
    const retried = seen.filter((s) => s.startsWith("retry:")).length;
    const plain = seen.filter((s) => !s.startsWith("retry:"));
    const distinct = [...new Set(plain)];
    replays += plain.length - distinct.length;
    retries += retried;
    const sameSet =
      distinct.length === expected.length && expected.every((s) => distinct.includes(s));
    const exact = seen.length === expected.length && sameSet;
    if (!sameSet || (!exact && !victims.has(name))) wrongCalls.push(`${name}: ${seen.join(",")}`);
    // One assistant event per answered call: a retry (or re-fork after an interruption) adds one.
    const assistants = byName.get(name)?.[0]?.assistants ?? 0;
    if (
      assistants !== expected.length + retried &&
      !(victims.has(name) && assistants >= expected.length)
    ) {
      wrongAssistants.push(`${name}: ${assistants}, expected ${expected.length}`);
    }
  }
  note("model calls not as scripted", wrongCalls);
  note("assistant events not once per call", wrongAssistants);

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
