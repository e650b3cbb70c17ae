// The exactly-once invariants of a finished tree, checked from the rows and from what the fake
// model was sent, for fault tests that break the connection between a write and its reply. Each
// check returns a line per violation (all of them, so a failure shows the whole damage at once).
import { sql } from "drizzle-orm";
import { expect } from "vitest";
import type { Db } from "../../src/db/client.js";
import { agentNameOf, type FakeModel, type RecordedRequest } from "../support/fake-model.js";

export interface ExpectedMail {
  /** Agent names (unique within the tree). */
  from: string;
  to: string;
  body: string;
}

export interface TreeExpectations {
  treeId: string;
  /** Every mail that must exist once, consumed once, shown to its recipient's model once. */
  mail: ExpectedMail[];
  fake: FakeModel;
  /** The stderr of every warren process of the run. */
  stderr?: string[];
  /**
   * "once" (default): one model call per step, so one assistant event per answered request and
   * counters equal to the model's usage. "again-after-takeover": a response in flight when its
   * process lost the lease is lost with it and the new owner asks again, so fewer assistant events
   * than requests are allowed (never two for one response).
   */
  modelCalls?: "once" | "again-after-takeover";
  /** The usage the fake reports per answered request (its default: 10 in, 5 out). */
  usagePerRequest?: { input: number; output: number };
}

type AgentInfo = {
  id: string;
  name: string;
  state: string;
  lease_owner: string | null;
  input_tokens: number;
  output_tokens: number;
};

/** Every violated invariant of the finished tree, one line each; [] when it holds. */
export async function treeViolations(db: Db, expected: TreeExpectations): Promise<string[]> {
  const agents = (
    await db.execute<AgentInfo>(sql`
      select id, name, state, lease_owner, input_tokens::int, output_tokens::int
        from agents where tree_id = ${expected.treeId} order by created_at, id`)
  ).rows;
  const byId = new Map(agents.map((a) => [a.id, a]));
  const answered = answeredRequests(expected.fake);
  return [
    ...settled(agents),
    ...(await liveStreams(db, expected.treeId)),
    ...(await mailRows(db, expected, byId)),
    ...(await mailEvents(db, expected, byId)),
    ...shownToModels(expected, byId, answered),
    ...(await toolResults(db, expected.treeId)),
    ...(await assistants(db, expected, agents, answered)),
    ...(await duplicateResponses(db, expected.treeId)),
    ...stderrLines(expected.stderr ?? []),
    ...unexpectedRequests(expected.fake, new Set(agents.map((a) => a.id))),
  ];
}

/** Asserts treeViolations is empty, listing every violation. */
export async function expectTreeInvariants(db: Db, expected: TreeExpectations): Promise<void> {
  const violations = await treeViolations(db, expected);
  expect(violations, `exactly-once violations:\n  ${violations.join("\n  ")}`).toEqual([]);
}

/** The agent a model request is for, from the system prompt's `Your id:` line (so several trees
 *  with the same agent names can share one fake model). */
function agentIdOf(req: RecordedRequest): string | undefined {
  return /^Your id: (\S+)$/m.exec(req.systemPrompt ?? "")?.[1];
}

/** Requests the fake answered with a scripted reply (not an unmatched 500 nor a too-long 400). */
function answeredRequests(fake: FakeModel): RecordedRequest[] {
  const refused = new Set([...fake.unmatched, ...fake.tooLong]);
  return fake.requests.filter((req) => !refused.has(req));
}

function settled(agents: AgentInfo[]): string[] {
  const out: string[] = [];
  for (const a of agents) {
    if (a.state === "running" || a.state === "waiting") out.push(`${a.name} left ${a.state}`);
    if (a.lease_owner !== null) out.push(`${a.name} left leased by ${a.lease_owner}`);
  }
  return out;
}

async function liveStreams(db: Db, treeId: string): Promise<string[]> {
  const rows = await db.execute<{ name: string }>(sql`
    select a.name from agent_streams s join agents a on a.id = s.agent_id
     where a.tree_id = ${treeId} and s.live`);
  return rows.rows.map((r) => `${r.name} left with a live stream`);
}

/** The mail rows are exactly the expected ones: none missing, none sent twice. */
async function mailRows(
  db: Db,
  expected: TreeExpectations,
  byId: Map<string, AgentInfo>,
): Promise<string[]> {
  const rows = await db.execute<{ from_id: string | null; to_id: string; body: string }>(sql`
    select from_id, to_id, body from mail where tree_id = ${expected.treeId} and kind = 'mail'`);
  const key = (m: ExpectedMail) => `${m.from}→${m.to} ${m.body}`;
  const want = countBy(expected.mail.map(key));
  const have = countBy(
    rows.rows.map((r) =>
      key({
        from: r.from_id ? (byId.get(r.from_id)?.name ?? r.from_id) : "human",
        to: byId.get(r.to_id)?.name ?? r.to_id,
        body: r.body,
      }),
    ),
  );
  const out: [string, string][] = [];
  for (const [k, n] of want) {
    const got = have.get(k) ?? 0;
    if (got !== n) out.push([`mail with ${got} row(s), expected ${n}`, k]);
  }
  for (const [k, n] of have) if (!want.has(k)) out.push([`unexpected mail (${n} rows)`, k]);
  return grouped(out);
}

/**
 * Every mail consumed by one event of its recipient that shows it (`mail_in` or a `wait` result),
 * and each body shown in exactly one such event.
 */
async function mailEvents(
  db: Db,
  expected: TreeExpectations,
  byId: Map<string, AgentInfo>,
): Promise<string[]> {
  const out: [string, string][] = [];
  const rows = await db.execute<{
    id: string;
    to_id: string;
    body: string;
    consumed_at: Date | null;
    event_agent: string | null;
    event_kind: string | null;
    event_content: string | null;
  }>(sql`
    select m.id, m.to_id, m.body, m.consumed_at, e.agent_id as event_agent,
           e.kind as event_kind, e.content as event_content
      from mail m left join events e on e.id = m.consumed_by_event
     where m.tree_id = ${expected.treeId} and m.kind = 'mail'`);
  for (const m of rows.rows) {
    const what = `#${m.id} ${m.body} to ${byId.get(m.to_id)?.name ?? m.to_id}`;
    if (m.consumed_at === null) out.push(["mail never consumed", what]);
    if (m.event_agent === null) out.push(["mail with no consuming event", what]);
    else if (m.event_agent !== m.to_id) out.push(["mail consumed by another agent's event", what]);
    else if (m.event_kind !== "mail_in" && m.event_kind !== "tool_result") {
      out.push([`mail consumed by a ${m.event_kind} event`, what]);
    } else if (!(m.event_content ?? "").includes(m.body)) {
      out.push(["mail consumed by an event that does not show it", what]);
    }
  }
  const shown = await db.execute<{ agent_id: string; content: string }>(sql`
    select e.agent_id, e.content from events e join agents a on a.id = e.agent_id
     where a.tree_id = ${expected.treeId} and e.kind in ('mail_in', 'tool_result')`);
  for (const m of expected.mail) {
    const to = [...byId.values()].find((a) => a.name === m.to);
    const n = shown.rows.filter((e) => e.agent_id === to?.id && e.content.includes(m.body)).length;
    if (n !== 1) out.push([`mail shown in ${n} events of its recipient, expected 1`, m.body]);
  }
  return grouped(out);
}

/**
 * What each recipient's model was actually sent: every expected body in exactly one message
 * (a tool result or a user message, identified by tool_call_id or position) across all of its
 * requests, and no message that changed between requests (a result replaced after being shown).
 */
function shownToModels(
  expected: TreeExpectations,
  byId: Map<string, AgentInfo>,
  answered: RecordedRequest[],
): string[] {
  const out: [string, string][] = [];
  const recipients = new Set(expected.mail.map((m) => m.to));
  for (const name of recipients) {
    const seen = new Map<string, string>(); // message identity → its content
    const id = [...byId.values()].find((a) => a.name === name)?.id;
    for (const req of answered.filter((r) => agentIdOf(r) === id)) {
      req.messages.forEach((message, index) => {
        if (message.role !== "tool" && message.role !== "user") return;
        const id = message.role === "tool" ? `tool ${message.tool_call_id}` : `user #${index}`;
        const content = message.content ?? "";
        const before = seen.get(id);
        if (before === undefined) seen.set(id, content);
        else if (before !== content) out.push([`${name}'s model was shown a message changed`, id]);
      });
    }
    for (const m of expected.mail.filter((mail) => mail.to === name)) {
      const holders = [...seen].filter(([, content]) => content.includes(m.body)).map(([id]) => id);
      if (holders.length !== 1) {
        const where = holders.length ? ` (${holders.join(", ")})` : "";
        out.push([`${name}'s model was shown a mail ${holders.length} times`, m.body + where]);
      }
    }
  }
  return grouped(out);
}

/** Every tool call of every assistant event answered exactly once. */
async function toolResults(db: Db, treeId: string): Promise<string[]> {
  const rows = await db.execute<{ name: string; call: string; results: number }>(sql`
    with calls as (
      select e.agent_id, c->>'id' as call
        from events e join agents a on a.id = e.agent_id,
             jsonb_array_elements(coalesce(e.data->'tool_calls', '[]'::jsonb)) c
       where a.tree_id = ${treeId} and e.kind = 'assistant'
    ), results as (
      select e.agent_id, e.data->>'tool_call_id' as call, count(*)::int as n
        from events e join agents a on a.id = e.agent_id
       where a.tree_id = ${treeId} and e.kind = 'tool_result'
       group by 1, 2
    )
    select a.name, coalesce(c.call, r.call) as call,
           coalesce(r.n, 0) * (case when c.call is null then -1 else 1 end) as results
      from calls c full join results r on r.agent_id = c.agent_id and r.call = c.call
      join agents a on a.id = coalesce(c.agent_id, r.agent_id)
     where c.call is null or coalesce(r.n, 0) <> 1`);
  return grouped(
    rows.rows.map((r) =>
      r.results < 0
        ? [`${r.name}: results for calls no assistant event made`, r.call]
        : [`${r.name}: tool calls answered ${r.results} times`, r.call],
    ),
  );
}

/**
 * One assistant event per model response (a retried write must not record a response twice, nor
 * lose it), and the agents' token counters equal to the usage of the responses recorded.
 */
async function assistants(
  db: Db,
  expected: TreeExpectations,
  agents: AgentInfo[],
  answered: RecordedRequest[],
): Promise<string[]> {
  const out: string[] = [];
  const rows = await db.execute<{ agent_id: string; n: number; input: number; output: number }>(sql`
    select e.agent_id, count(*)::int as n,
           coalesce(sum((e.data->'usage'->>'inputTokens')::int), 0)::int as input,
           coalesce(sum((e.data->'usage'->>'outputTokens')::int), 0)::int as output
      from events e join agents a on a.id = e.agent_id
     where a.tree_id = ${expected.treeId} and e.kind = 'assistant'
     group by e.agent_id`);
  const per = new Map(rows.rows.map((r) => [r.agent_id, r]));
  const usage = expected.usagePerRequest ?? { input: 10, output: 5 };
  for (const a of agents) {
    const recorded = per.get(a.id) ?? { n: 0, input: 0, output: 0 };
    const requests = answered.filter((r) => agentIdOf(r) === a.id).length;
    const strict = (expected.modelCalls ?? "once") === "once";
    if (strict ? recorded.n !== requests : recorded.n > requests) {
      out.push(`${a.name}: ${recorded.n} assistant events for ${requests} model responses`);
    }
    if (a.input_tokens !== recorded.input || a.output_tokens !== recorded.output) {
      out.push(
        `${a.name}: counters ${a.input_tokens}/${a.output_tokens} tokens, ` +
          `its assistant events ${recorded.input}/${recorded.output}`,
      );
    }
    const spent = { input: requests * usage.input, output: requests * usage.output };
    if (strict && (a.input_tokens !== spent.input || a.output_tokens !== spent.output)) {
      out.push(
        `${a.name}: counters ${a.input_tokens}/${a.output_tokens} tokens, ` +
          `the model's ${requests} responses ${spent.input}/${spent.output}`,
      );
    }
  }
  return out;
}

/**
 * One response recorded twice shows as two assistant events in a row (a response with tool calls
 * is followed by their results, one without ends the turn), or as one tool call id in two.
 */
async function duplicateResponses(db: Db, treeId: string): Promise<string[]> {
  const rows = await db.execute<{ name: string; id: string; why: string }>(sql`
    with ctx as (
      select e.id, e.agent_id, e.kind, e.data,
             lag(e.kind) over (partition by e.agent_id order by e.id) as before
        from events e join agents a on a.id = e.agent_id
       where a.tree_id = ${treeId} and e.kind in ('user', 'mail_in', 'assistant', 'tool_result')
    )
    select a.name, ctx.id::text, 'follows another assistant event' as why
      from ctx join agents a on a.id = ctx.agent_id
     where ctx.kind = 'assistant' and ctx.before = 'assistant'
    union all
    select a.name, c->>'id', 'tool call id in two assistant events'
      from ctx join agents a on a.id = ctx.agent_id,
           jsonb_array_elements(coalesce(ctx.data->'tool_calls', '[]'::jsonb)) c
     where ctx.kind = 'assistant'
     group by a.name, c->>'id' having count(*) > 1`);
  return grouped(rows.rows.map((r) => [`${r.name}: a response recorded twice (${r.why})`, r.id]));
}

/** Model calls no script line expected (answered with an error): a step asked for twice. */
function unexpectedRequests(fake: FakeModel, ids: Set<string>): string[] {
  return fake.unmatched
    .filter((req) => ids.has(agentIdOf(req) ?? ""))
    .map((req) => {
      const last = req.lastMessage;
      const text = JSON.stringify(last?.content ?? last?.tool_calls ?? null).slice(0, 160);
      return `${agentNameOf(req)}'s model was asked an unexpected request, last message ${last?.role}: ${text}`;
    });
}

function stderrLines(stderr: string[]): string[] {
  return stderr.flatMap((text) =>
    text
      .split("\n")
      .filter((line) => /worker thread stopped|Failed query/i.test(line))
      .map((line) => `stderr: ${line.slice(0, 200)}`),
  );
}

/** Lines of [what, item] pairs as one line per `what`: "what (n): item, item, …". */
function grouped(pairs: [string, string][]): string[] {
  const by = new Map<string, string[]>();
  for (const [what, item] of pairs) by.set(what, [...(by.get(what) ?? []), item]);
  return [...by].map(([what, items]) => `${what} (${items.length}): ${items.join(", ")}`);
}

function countBy(keys: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const k of keys) out.set(k, (out.get(k) ?? 0) + 1);
  return out;
}
