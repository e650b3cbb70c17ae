// The model's context, derived from events: system prompt, then the newest summary or else the
// inherited part of the parent's conversation (for `inherit` children), then the agent's own
// transcript. `capture` and display kinds never enter it; every tool call is paired with exactly
// one result, in call order.
import type { AgentRow } from "../agents/agents.sql.js";
import { events, type EventRow } from "../agents/events.sql.js";
import { rowFromJson } from "../db/json-row.js";
import { getAgent } from "../agents/refs.js";
import type { Queryable } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import type { ChatMessage, ToolCall } from "../llm/model.js";
import { inheritedTaskText, quotedConversation, summaryText, taskText } from "../llm/framing.js";
import { systemPrompt } from "./system-prompt.js";

export const INTERRUPTED_RESULT = JSON.stringify({
  error: {
    code: "INTERNAL",
    message: "interrupted: this call did not finish (it may have partly run)",
  },
});

export function eventToMessage(event: EventRow): ChatMessage | undefined {
  switch (event.kind) {
    case "user":
    case "mail_in":
      return { role: "user", content: event.content };
    case "assistant": {
      const calls = (event.data?.tool_calls as ToolCall[] | undefined) ?? [];
      return calls.length
        ? { role: "assistant", content: event.content || null, tool_calls: calls }
        : { role: "assistant", content: event.content };
    }
    case "tool_result":
      return {
        role: "tool",
        tool_call_id: String(event.data?.tool_call_id ?? ""),
        content: event.content,
      };
    case "tool_call":
    case "system":
    case "capture":
    case "command":
    case "mail_out":
    case "fork":
    case "killed":
    case "interrupted":
    case "error":
    case "summary":
      return undefined;
  }
}

/** Pairs each assistant tool call with one result in call order; drops orphans, fills gaps. */
export function repairToolPairs(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === "tool") continue; // consumed below, or an orphan
    out.push(message);
    if (message.role !== "assistant" || !message.tool_calls?.length) continue;
    const results = new Map<string, ChatMessage>();
    const others: ChatMessage[] = [];
    let j = i + 1;
    for (; j < messages.length && messages[j]!.role !== "assistant"; j++) {
      const next = messages[j]!;
      if (next.role === "tool") {
        if (!results.has(next.tool_call_id)) results.set(next.tool_call_id, next);
      } else others.push(next);
    }
    for (const call of message.tool_calls) {
      out.push(
        results.get(call.id) ?? {
          role: "tool",
          tool_call_id: call.id,
          content: INTERRUPTED_RESULT,
        },
      );
    }
    out.push(...others);
    i = j - 1;
  }
  return out;
}

/** A message of the context and the event it came from (none for quoted or summary text). */
export interface ContextEntry {
  message: ChatMessage;
  eventId?: number;
}

export interface ContextOptions {
  /** A tool result longer than this is cut, with a note saying how to read the rest. */
  maxToolResultChars?: number;
  /** The agent's parent row, when the caller read it already (null: a root); else it is read. */
  parent?: AgentRow | null;
  /** The agent's conversation as the caller read it already (the turn loop's pass); else read. */
  read?: ConversationRead;
}

/**
 * The conversation of `agent` (without its system prompt) up to, not including, event `before`.
 * It starts from the newest `summary` event when there is one (compaction: the summary stands
 * for everything up to its `through_event`); otherwise, for an `inherit` child, from its parent's
 * conversation: its parent's request itself when it shares it (sharesParentRequest), else quoted
 * as one message. Then its own events, a child's first `user` message framed as its task.
 */
export async function conversation(
  q: Queryable,
  agent: AgentRow,
  options: {
    before?: number;
    /** The agent's events as the caller read them already (the turn loop's pass: no `before`). */
    read?: ConversationRead;
    /** The agent's parent row, when the caller has it. */
    parent?: AgentRow;
  } = {},
): Promise<ContextEntry[]> {
  return (await requestParts(q, agent, { ...options, parent: options.parent })).entries;
}

/** What a request is built from: its system prompt and the messages after it. */
export interface RequestParts {
  system: string;
  entries: ContextEntry[];
}

/**
 * Does `agent` start from its parent's request, byte for byte (SPEC §7, "Requests a prompt cache
 * can serve")? An `inherit` child forked by a fork call (its cut-off is that call's assistant
 * event), with its parent's profile and so its tool set and base prompt, until it compacts its
 * own conversation (then its own system prompt says who it is again).
 */
export function sharesParentRequest(
  agent: AgentRow,
  parent: AgentRow | undefined,
  summary: SummaryRow | undefined,
): parent is AgentRow {
  return (
    agent.context_mode === "inherit" &&
    agent.context_parent_event !== null &&
    parent !== undefined &&
    parent.id === agent.parent_id &&
    (agent.profile ?? null) === (parent.profile ?? null) &&
    summary === undefined
  );
}

/**
 * The system prompt and messages of `agent`'s next request (before event `before`). `parent`:
 * its parent's row when the caller has it (null: none, a root); else it is read.
 */
export async function requestParts(
  q: Queryable,
  agent: AgentRow,
  options: { before?: number; read?: ConversationRead; parent?: AgentRow | null } = {},
): Promise<RequestParts> {
  // Only the events after the newest summary are read: a turn's cost follows the context the
  // model sees, not the agent's whole history.
  const { summary, firstUser, own } =
    options.read ?? (await readConversation(q, agent.id, options.before));
  const parent =
    options.parent !== undefined &&
    (options.parent === null || options.parent.id === agent.parent_id)
      ? (options.parent ?? undefined)
      : agent.parent_id
        ? await getAgent(q, agent.parent_id)
        : undefined;
  if (sharesParentRequest(agent, parent, summary)) {
    // The parent's request that made the fork call: everything before that call's answer.
    const above = await requestParts(q, parent, { before: agent.context_parent_event! });
    const who = {
      name: agent.name,
      id: agent.id,
      parentName: parent.name,
      parentId: parent.id,
      cwd: agent.cwd ?? process.cwd(),
      outputSchema: agent.output_schema,
    };
    const entries: ContextEntry[] = above.entries.map((e) => ({ message: e.message }));
    const task = own.find((e) => e.id === firstUser);
    if (!task)
      entries.push({ message: { role: "user", content: inheritedTaskText(who, undefined) } });
    for (const event of own) {
      const message =
        event.id === firstUser
          ? { role: "user" as const, content: inheritedTaskText(who, event.content) }
          : eventToMessage(event);
      if (message) entries.push({ message, eventId: event.id });
    }
    return { system: above.system, entries };
  }
  const prefix: ContextEntry[] = summary
    ? [{ message: { role: "user", content: summaryText(summary.content) } }]
    : await inheritedPrefix(q, agent, parent);
  const entries: ContextEntry[] = [];
  for (const event of own) {
    const message =
      agent.parent_id && event.id === firstUser
        ? { role: "user" as const, content: taskText(event.content) }
        : eventToMessage(event);
    if (message) entries.push({ message, eventId: event.id });
  }
  return { system: systemPrompt(agent, parent), entries: [...prefix, ...entries] };
}

export type SummaryRow = Pick<EventRow, "id" | "content" | "data">;

/** What a conversation is built from (see CONVERSATION; the pass read reads the same). */
export interface ConversationRead {
  /** The newest summary (before `before`), if any. */
  summary: SummaryRow | undefined;
  /** The agent's first `user` event: a child's task. */
  firstUser: number | undefined;
  /** The events after the summary (all without one), before `before`, oldest first. */
  own: EventRow[];
}

/**
 * In one statement: the newest summary before `before` (if any), the first `user` event (a
 * child's task), and the agent's events after the summary (all of them without one) and before
 * `before`, oldest first.
 */
async function readConversation(
  q: Queryable,
  agentId: string,
  before: number | undefined,
): Promise<ConversationRead> {
  const [row] = await runPrepared<{
    summary: SummaryRow | null;
    first_user: string | null;
    own: Record<string, unknown>[];
  }>(q, CONVERSATION, [agentId, before ?? null]);
  return {
    summary: row?.summary ? { ...row.summary, id: Number(row.summary.id) } : undefined,
    firstUser: row?.first_user ? Number(row.first_user) : undefined,
    own: (row?.own ?? []).map((event) => rowFromJson(events, event)),
  };
}

// The pieces of SQL a conversation is read with, shared with the turn loop's pass read.
/** The agent's newest summary (id, content, data), before `before` when given (may be null). */
export const newestSummarySql = (agent: string, before?: string) => `
  select id, content, data from events
   where agent_id = ${agent} and kind = 'summary' and rewound_at is null${before ? ` and (${before} is null or id < ${before})` : ""}
   order by id desc limit 1`;
/** The id of the agent's first `user` event: a child's task. */
export const firstUserSql = (agent: string) =>
  `(select id from events where agent_id = ${agent} and kind = 'user' and rewound_at is null order by id limit 1)`;
/** The last event the summary in `cte` stands for (0 without one): the agent's own come after. */
export const summaryThroughSql = (cte: string) =>
  `coalesce((select coalesce((data->>'through_event')::bigint, id) from ${cte}), 0)`;

/** $1 the agent, $2 `before` (null: none). A summary stands for everything to its through_event. */
const CONVERSATION: Prepared = {
  name: "warren_conversation",
  text: `with s as (${newestSummarySql("$1::uuid", "$2::bigint")})
    select (select to_jsonb(s) from s) as summary,
           ${firstUserSql("$1::uuid")} as first_user,
           (select coalesce(jsonb_agg(to_jsonb(e) order by e.id), '[]')
              from events e
             where e.agent_id = $1::uuid and ($2::bigint is null or e.id < $2::bigint)
               and e.rewound_at is null
               and e.id > ${summaryThroughSql("s")})
             as own`,
};

/** `known`: the parent's row when the caller has it (saves a read). */
async function inheritedPrefix(
  q: Queryable,
  agent: AgentRow,
  known?: AgentRow,
): Promise<ContextEntry[]> {
  if (agent.context_mode !== "inherit" || !agent.parent_id) return [];
  const parent = known?.id === agent.parent_id ? known : await getAgent(q, agent.parent_id);
  if (!parent) return [];
  const quoted = repairToolPairs(
    (await conversation(q, parent, { before: agent.context_parent_event ?? undefined })).map(
      (e) => e.message,
    ),
  );
  return quoted.length ? [{ message: quotedConversation(parent.name, agent.name, quoted) }] : [];
}

export async function buildContext(
  q: Queryable,
  agent: AgentRow,
  options: ContextOptions = {},
): Promise<ChatMessage[]> {
  const parts = await requestParts(q, agent, { read: options.read, parent: options.parent });
  const system: ChatMessage = { role: "system", content: parts.system };
  const max = options.maxToolResultChars;
  return [system, ...repairToolPairs(parts.entries.map((e) => e.message))].map((m) =>
    m.role === "tool" && max !== undefined && m.content.length > max
      ? { ...m, content: truncatedResult(m.content, max) }
      : m,
  );
}

/**
 * A tool result cut to about `max` characters, saying so and how to get the rest. A JSON object
 * stays valid JSON: its longest string field is cut and a `truncated_by_warren` note added.
 */
export function truncatedResult(content: string, max: number): string {
  const cutChars = (dropped: number) =>
    `[truncated by warren: ${dropped} more characters did not fit in the context. Read the ` +
    "rest in smaller parts: read_file with offset and limit, or a command that prints less " +
    "(head, tail, grep).]";
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    parsed = undefined;
  }
  if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
    const object = parsed as Record<string, unknown>;
    const longest = Object.keys(object)
      .filter((k) => typeof object[k] === "string")
      .sort((a, b) => (object[b] as string).length - (object[a] as string).length)[0];
    if (longest !== undefined) {
      const value = object[longest] as string;
      const keep = Math.max(0, value.length - (content.length - max) - 400);
      return JSON.stringify({
        ...object,
        [longest]: value.slice(0, keep),
        truncated_by_warren: cutChars(value.length - keep),
      });
    }
  }
  const keep = Math.max(0, max - 300);
  return `${content.slice(0, keep)}\n${cutChars(content.length - keep)}`;
}
