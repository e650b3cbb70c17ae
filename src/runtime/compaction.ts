// Long conversations (SPEC §7): before a request would outgrow the model's context window, the
// older part of the conversation is summarised by the model into a `summary` event that later
// contexts start from; a server's context-length error triggers one compaction and a retry.
// The events themselves are never touched: the scrollback keeps everything.
import { sql } from "drizzle-orm";
import { agents, type AgentRow } from "../agents/agents.sql.js";
import { appendEventOnce } from "../agents/events.js";
import { eventKey } from "../agents/event-keys.js";
import { assertLease } from "../agents/lock-order.js";
import type { Fence } from "../agents/errors.js";
import type { Config } from "../config/config.js";
import type { Db } from "../db/client.js";
import { neutraliseTag, transcriptText } from "../llm/framing.js";
import {
  isContextOverflow,
  type ChatMessage,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type ToolSpec,
} from "../llm/model.js";
import { estimateTokens } from "../llm/stream-assembly.js";
import {
  buildContext,
  conversation,
  repairToolPairs,
  type ContextEntry,
  type ConversationRead,
} from "./context.js";
import { addUsage } from "./usage-counters.js";
import { derived } from "../derived.js";

/** When neither the config nor the server's /models says: small enough for most local servers. */
export const DEFAULT_CONTEXT_WINDOW = 32_768;
/** OpenAI itself lists no windows; its current models all take at least this. */
const OPENAI_CONTEXT_WINDOW = 128_000;

/**
 * The window assumed when neither the config nor /models says: 128k for OpenAI's own API (no base
 * URL, or one on api.openai.com), 32k for any other server. Decided by the server, not by whether
 * a URL was given: the config's `"base_url": "https://api.openai.com/v1"` is still OpenAI.
 */
export function defaultContextWindow(baseURL: string | undefined): number {
  if (!baseURL) return OPENAI_CONTEXT_WINDOW;
  let host: string;
  try {
    host = new URL(baseURL).hostname.toLowerCase();
  } catch {
    return DEFAULT_CONTEXT_WINDOW;
  }
  return host === "api.openai.com" ? OPENAI_CONTEXT_WINDOW : DEFAULT_CONTEXT_WINDOW;
}
/** Compact once a request would fill this share of the window (room for the answer). */
const COMPACT_AT = 0.7;
/** The newest messages kept verbatim after a compaction, as a share of the window. */
const KEEP_RECENT = 0.25;
/** A single tool result never takes more than this share of the window. */
const MAX_RESULT_SHARE = 0.25;

export interface CompactionDeps {
  db: Db;
  model: Model;
  config: Config;
  /** The turn's lease: the summary and its counters are written only while it holds. */
  fence?: Fence;
}

const windows = new WeakMap<Model, Map<string, Promise<number>>>();

/** The context window of `modelName`: config, else what the server reports, else the default. */
export function contextWindowFor(deps: CompactionDeps, modelName: string): Promise<number> {
  const configured =
    deps.config.model.contextWindows[modelName] ?? deps.config.model.contextWindows["*"];
  if (configured !== undefined) return Promise.resolve(configured);
  let cache = windows.get(deps.model);
  if (!cache) windows.set(deps.model, (cache = new Map()));
  let found = cache.get(modelName);
  if (!found) {
    found = (deps.model.contextWindow?.(modelName) ?? Promise.resolve(undefined))
      .catch(() => undefined)
      .then((reported) => reported ?? defaultContextWindow(deps.config.model.baseURL));
    cache.set(modelName, found);
  }
  return found;
}

/** Tokens of a tool list, by the list: the turn loop sends the same array every time (registry.ts). */
const toolTokens = new WeakMap<ToolSpec[], number>();

export function estimateRequest(messages: ChatMessage[], tools: ToolSpec[]): number {
  const forTools = derived(toolTokens, tools, (list) => estimateTokens(JSON.stringify(list)));
  return estimateTokens(JSON.stringify(messages)) + forTools;
}

/**
 * The context for the next request of `agent`, compacted first when it would not fit. Tool
 * results too large for the window are cut (with a note) in any case.
 */
export async function fitContext(
  deps: CompactionDeps,
  agent: AgentRow,
  modelName: string,
  tools: ToolSpec[],
  signal: AbortSignal,
  /** What the caller read already, each saving a read: the agent's parent row (null: a root)
   * and its conversation (the turn loop's pass read both in the statement that chose this step). */
  known: { parent?: AgentRow | null; read?: ConversationRead } = {},
): Promise<ChatMessage[]> {
  const window = await contextWindowFor(deps, modelName);
  const options = {
    maxToolResultChars: Math.floor(window * MAX_RESULT_SHARE * 4),
    parent: known.parent,
  };
  const messages = await buildContext(deps.db, agent, { ...options, read: known.read });
  if (estimateRequest(messages, tools) <= window * COMPACT_AT) return messages;
  const compacted = await compact(deps, agent, modelName, window, signal);
  // Read again: the new summary stands for the older part of what was read before.
  return compacted ? buildContext(deps.db, agent, options) : messages;
}

/**
 * `request`, sent; when the server says it is longer than the context window, the agent's
 * conversation is compacted once and the request sent again with the compacted context.
 */
export async function completeFitting(
  deps: CompactionDeps,
  agent: AgentRow,
  request: ModelRequest,
): Promise<ModelResponse> {
  try {
    return await deps.model.complete(request);
  } catch (err) {
    if (!isContextOverflow(err)) throw err;
    const window = await contextWindowFor(deps, request.model);
    // The server's window is smaller than we thought: aim well below what was just refused.
    const target = Math.min(
      window,
      Math.floor(estimateRequest(request.messages, request.tools) * 0.6),
    );
    if (!(await compact(deps, agent, request.model, target, request.signal))) throw err;
    const options = { maxToolResultChars: Math.floor(target * MAX_RESULT_SHARE * 4) };
    return deps.model.complete({
      ...request,
      messages: await buildContext(deps.db, agent, options),
    });
  }
}

/**
 * Summarises the older part of the agent's conversation into a `summary` event, keeping the
 * newest messages (about KEEP_RECENT of `window`) verbatim. False when there is nothing older to
 * summarise.
 */
export async function compact(
  deps: CompactionDeps,
  agent: AgentRow,
  modelName: string,
  window: number,
  signal: AbortSignal,
): Promise<boolean> {
  const entries = await conversation(deps.db, agent);
  const cut = cutIndex(entries, window * KEEP_RECENT);
  const older = entries.slice(0, cut);
  // Summarising a lone earlier summary again would only lose detail.
  if (older.length === 0 || (older.length === 1 && older[0]!.eventId === undefined)) return false;
  const through = Math.max(0, ...older.map((e) => e.eventId ?? 0));
  const response = await deps.model.complete({
    model: modelName,
    messages: summaryRequest(agent, older, window),
    tools: [],
    signal,
  });
  // Fenced and keyed (SPEC §5): a worker that lost the lease writes nothing (assertLease, and the
  // epoch the database checks on the event); a retry or a second worker summarising the same
  // older part finds the summary recorded and counts its usage no second time.
  await deps.db.transaction(async (tx) => {
    if (deps.fence) await assertLease(tx, agent.id, deps.fence);
    const { fresh } = await appendEventOnce(
      tx,
      agent.id,
      "summary",
      response.text.trim(),
      { through_event: through, summarised_messages: older.length, usage: response.usage },
      { key: eventKey.summary(through), epoch: deps.fence?.epoch },
    );
    if (!fresh) return;
    await tx
      .update(agents)
      .set(addUsage(response.usage))
      .where(sql`${agents.id} = ${agent.id}`);
  });
  return true;
}

/**
 * Where the kept tail starts: the earliest user or assistant message (never a tool result, so
 * no call is parted from its result) from which the rest fits in `keepTokens`; at least the
 * last such message.
 */
function cutIndex(entries: ContextEntry[], keepTokens: number): number {
  let cut = entries.length;
  let tail = 0;
  for (let i = entries.length - 1; i > 0; i--) {
    tail += estimateTokens(JSON.stringify(entries[i]!.message));
    if (entries[i]!.message.role === "tool") continue;
    if (tail > keepTokens && cut < entries.length) break;
    cut = i;
  }
  return cut === entries.length ? entries.length : cut;
}

const SUMMARISER =
  "You summarise the conversation of an AI agent so that it can go on working with your " +
  "summary in place of the older messages. Keep what it still needs: its task and who gave " +
  "it, what it has done and found, decisions, results, names of agents it forked or mailed " +
  "and their state, file paths and commands that matter, and what remains to do. Write plain " +
  'text in the second person ("You …"), at most 400 words. Reply with the summary only.';

function summaryRequest(agent: AgentRow, older: ContextEntry[], window: number): ChatMessage[] {
  // The request itself must fit: each message is cut to a fair share of half the window.
  const budget = Math.floor(window * 0.5 * 4);
  const share = Math.max(500, Math.floor(budget / older.length));
  const messages = repairToolPairs(older.map((e) => e.message)).map((m) =>
    m.content && m.content.length > share
      ? { ...m, content: `${m.content.slice(0, share)} […]` }
      : m,
  );
  const body = neutraliseTag(transcriptText(agent.name, messages), "conversation");
  return [
    { role: "system", content: SUMMARISER },
    {
      role: "user",
      content:
        `The conversation of the agent ${agent.name}:\n<conversation>\n${body}\n</conversation>` +
        `\n\nSummarise it for ${agent.name}.`,
    },
  ];
}
