// A real local HTTP server speaking OpenAI's streaming Chat Completions format, answering from a
// script of rules, recording every request; so tests run the real `openai` SDK end to end.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface RecordedMessage {
  role: string;
  content?: string | null;
  tool_call_id?: string;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
}

export interface RecordedRequest {
  body: Record<string, unknown>;
  messages: RecordedMessage[];
  /** Names of the offered tools, in the order sent. */
  tools: string[];
  model: string;
  /** Content of the first system message. */
  systemPrompt: string | undefined;
  /**
   * Who the request's agent is told it is: the last user message that starts like an inherited
   * child's first message (INHERITED_HEAD, after its parent's request), else the system prompt.
   */
  identity: string | undefined;
  /** The request's size in tokens as the prefix cache counts them (promptTokensOf). */
  promptTokens: number;
  /** Tokens of its longest prefix that the server saw before, in any request (its prefix cache). */
  cachedTokens: number;
  lastMessage: RecordedMessage | undefined;
  /** Date.now() when the request arrived. */
  receivedAt: number;
}

export interface ScriptedToolCall {
  name: string;
  /** An object is JSON.stringify'd; a string is sent verbatim (so it may be malformed). */
  arguments: string | object;
  /** Default `call_fake_N_I`; null leaves the id out of the chunk; "" sends an empty id. */
  id?: string | null;
}

export interface Reply {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Answer this HTTP status with an OpenAI-style error body (`text` is its message). */
  status?: number;
  /** With `status`: the `retry-after-ms` header, which the SDK obeys. Default 0 (fast tests). */
  retryAfterMs?: number;
  /** Send headers, then nothing until the server closes. */
  hang?: boolean;
  /** Wait this long before answering. */
  delayMs?: number;
  /** `cached`/`reasoning`: sent as prompt_tokens_details / completion_tokens_details. */
  usage?: { input: number; output: number; cached?: number; reasoning?: number };
  /** Split the text into several deltas. Default true. */
  chunkText?: boolean;
  /** Pause this long before each streamed chunk (a slow stream, e.g. to watch it arrive live). */
  chunkDelayMs?: number;
  /** Split the text into deltas of this many characters (overrides chunkText). */
  chunkSize?: number;
  /** Called with the JSON text of each streamed chunk right after it is written (benchmarks). */
  onChunk?: (data: string) => void;
  /** With `status`: a `Retry-After` header in seconds (then no `retry-after-ms` is sent). */
  retryAfterSeconds?: number;
  // --- how servers other than OpenAI stream ---
  /** Reasoning streamed before the text, in `reasoning_content` (default) or `reasoning` deltas. */
  reasoning?: string;
  reasoningField?: "reasoning_content" | "reasoning";
  /** "separate" (default, OpenAI): a final chunk without choices when asked for it; "last-chunk":
   *  on the chunk with finish_reason, asked or not; "none": never. */
  usageMode?: "separate" | "last-chunk" | "none";
  /** Tool-call chunks without `index` (each call's pieces follow each other). */
  toolCallsWithoutIndex?: boolean;
  /** Every tool call in one chunk, arguments whole, all under index 0 (llama.cpp, Ollama style). */
  toolCallsInOneChunk?: boolean;
  /** Override the finish_reason (e.g. "stop" beside tool calls). */
  finishReason?: string;
}

/** Differences of a whole server, not of one reply. */
export interface ServerQuirks {
  /** Body parameters answered with a 400 "Unrecognized request argument supplied: NAME". */
  rejectParams?: string[];
  /** Served by GET /v1/models; undefined = 404 (servers without a listing). */
  models?: string[];
  /** Listed with the models, as vLLM's max_model_len. */
  contextLengths?: Record<string, number>;
  /** Requests longer than this (see requestTokens) get OpenAI's 400 context_length_exceeded. */
  maxContextTokens?: number;
}

/** A request's size in tokens as the fake counts it: about four characters a token. */
export function requestTokens(req: RecordedRequest): number {
  return (
    Math.ceil(JSON.stringify(req.messages).length / 4) +
    Math.ceil(JSON.stringify(req.body.tools ?? []).length / 4)
  );
}

export interface Rule {
  match?: (req: RecordedRequest) => boolean;
  /** Shorthand matcher: the agent named in the system prompt (see agentNameOf). */
  agent?: string;
  /** A function may take its time (the request waits): e.g. until something else happened. */
  reply: Reply | ((req: RecordedRequest) => Reply | Promise<Reply>);
  /** How many requests this rule answers. Default 1; Infinity for "always". */
  times?: number;
  /** Shown by assertAllUsed. */
  label?: string;
}

export interface FakeModel {
  /** E.g. "http://127.0.0.1:PORT/v1", for the SDK's baseURL. */
  baseURL: string;
  requests: RecordedRequest[];
  /** Requests no rule accepted (answered 500). */
  unmatched: RecordedRequest[];
  /** Requests refused as longer than `maxContextTokens`. */
  tooLong: RecordedRequest[];
  /**
   * Chat requests in flight (arrived, their response not yet ended or closed) now, and the most
   * there ever were at once (model-cap tests).
   */
  inFlight: { now: number; max: number };
  script(rules: Rule | Rule[]): void;
  /** Makes the server behave like a given kind of server from now on. */
  quirks(quirks: ServerQuirks): void;
  /** Throws listing every rule not used up and every unmatched request. */
  assertAllUsed(): void;
  /**
   * Drops what the server keeps of the requests so far (`requests` and its prefix cache), for a
   * test that measures what the runtime keeps in the same heap.
   */
  forget(): void;
  close(): Promise<void>;
}

export interface FakeModelOptions {
  /** How the `agent` shorthand finds a request's agent. Default agentNameOf. */
  agentNameOf?: (req: RecordedRequest) => string | undefined;
  /**
   * "measured": a reply without scripted `usage` reports the request's own prompt tokens and the
   * prefix cache's cached tokens (what a provider would bill). Default: the fixed 10 in, 5 out.
   */
  usage?: "measured";
}

/** The agent name from the line `Your name: NAME` of the request's identity (system prompt or an
 * inherited child's first message). */
export function agentNameOf(req: RecordedRequest): string | undefined {
  return /^Your name: (.+)$/m.exec(req.identity ?? "")?.[1]?.trim();
}

/** How an inherited child's first message starts (src/llm/framing.ts INHERITED_HEAD). */
const INHERITED_HEAD = "The conversation above is your parent's, not yours:";

/** Who messages tell their agent it is (RecordedRequest.identity). */
export function identityOf(messages: RecordedMessage[]): string | undefined {
  const inherited = messages.findLast(
    (m) =>
      m.role === "user" && typeof m.content === "string" && m.content.startsWith(INHERITED_HEAD),
  );
  if (inherited) return inherited.content ?? undefined;
  const system = messages.find((message) => message.role === "system")?.content;
  return typeof system === "string" ? system : undefined;
}

/** Characters per token of the prefix cache's count: about four, like requestTokens. */
const CHARS_PER_TOKEN = 4;

/**
 * A request as the prefix cache sees it: the tools, then each message, serialised in the order
 * sent (providers cache tools and system prompt first). Tokens are CHARS_PER_TOKEN characters.
 */
function cacheText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
  return JSON.stringify(body.tools ?? []) + messages.map((m) => JSON.stringify(m)).join("");
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * A server's prefix cache: the longest prefix of a request that any earlier request had, in
 * whole tokens (a partly matched token is not cached).
 *
 * Earlier requests are kept sorted (by UTF-16 code unit, as `<` and commonPrefix compare), so
 * the longest shared prefix is with one of the two neighbours where `text` sorts in: a lookup
 * costs a binary search, not a comparison with every earlier request (which made a run of
 * 1,000 requests spend seconds here, blocking the test's event loop, and grow with each one).
 */
export class PrefixCache {
  private readonly seen: string[] = [];

  /** Forgets every request seen (a test measuring its own heap: they are its largest strings). */
  clear(): void {
    this.seen.length = 0;
  }

  /** Looks `text` up, then remembers it. */
  serve(text: string): { promptTokens: number; cachedTokens: number } {
    let low = 0;
    let high = this.seen.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.seen[mid]! < text) low = mid + 1;
      else high = mid;
    }
    const before = this.seen[low - 1];
    const after = this.seen[low];
    const longest = Math.max(
      before === undefined ? 0 : commonPrefix(text, before),
      after === undefined ? 0 : commonPrefix(text, after),
    );
    this.seen.splice(low, 0, text);
    return {
      promptTokens: Math.ceil(text.length / CHARS_PER_TOKEN),
      cachedTokens: Math.floor(longest / CHARS_PER_TOKEN),
    };
  }
}

interface ScriptedRule extends Rule {
  remaining: number;
  used: number;
}

export async function startFakeModel(options: FakeModelOptions = {}): Promise<FakeModel> {
  const nameOf = options.agentNameOf ?? agentNameOf;
  const cache = new PrefixCache();
  const rules: ScriptedRule[] = [];
  const requests: RecordedRequest[] = [];
  const unmatched: RecordedRequest[] = [];
  const tooLong: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let counter = 0;
  const inFlight = { now: 0, max: 0 };
  let serverQuirks: ServerQuirks = {};

  const accepts = (rule: ScriptedRule, req: RecordedRequest) =>
    rule.remaining > 0 &&
    (rule.agent === undefined || nameOf(req) === rule.agent) &&
    (rule.match === undefined || rule.match(req));

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === "GET" && req.url?.endsWith("/models") && serverQuirks.models) {
      const lengths = serverQuirks.contextLengths ?? {};
      const data = serverQuirks.models.map((id) => ({
        id,
        object: "model",
        owned_by: "fake",
        ...(lengths[id] ? { max_model_len: lengths[id] } : {}),
      }));
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(JSON.stringify({ object: "list", data }));
    }
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      return sendError(
        res,
        404,
        `fake model serves only POST /v1/chat/completions, not ${req.url}`,
      );
    }
    const body = await readJson(req);
    if (body === undefined) return sendError(res, 400, "request body is not JSON");
    const recorded = record(body, cache);
    requests.push(recorded);
    inFlight.now++;
    inFlight.max = Math.max(inFlight.max, inFlight.now);
    res.once("close", () => inFlight.now--);
    if (body.stream !== true) return sendError(res, 400, "fake model answers only stream: true");
    const limit = serverQuirks.maxContextTokens;
    if (limit !== undefined && requestTokens(recorded) > limit) {
      tooLong.push(recorded);
      const message =
        `This model's maximum context length is ${limit} tokens. However, your messages ` +
        `resulted in ${requestTokens(recorded)} tokens. Please reduce the length of the messages.`;
      return sendError(res, 400, message, {}, "context_length_exceeded");
    }
    const rejected = serverQuirks.rejectParams?.find((param) => param in body);
    if (rejected) {
      return sendError(res, 400, `Unrecognized request argument supplied: ${rejected}`);
    }

    const rule = rules.find((candidate) => accepts(candidate, recorded));
    if (!rule) {
      unmatched.push(recorded);
      const who = nameOf(recorded) ?? "unknown agent";
      const last = JSON.stringify(recorded.lastMessage?.content ?? null).slice(0, 200);
      // No retry: a missing script line is a test bug, not a flaky server.
      return sendError(res, 500, `no scripted reply for ${who}, last message ${last}`, {
        "x-should-retry": "false",
      });
    }
    rule.remaining--;
    rule.used++;
    const reply = typeof rule.reply === "function" ? await rule.reply(recorded) : rule.reply;

    if (reply.delayMs) await sleep(reply.delayMs);
    if (reply.status !== undefined) {
      const retry: Record<string, string> =
        reply.retryAfterSeconds !== undefined
          ? { "retry-after": String(reply.retryAfterSeconds) }
          : { "retry-after-ms": String(reply.retryAfterMs ?? 0) };
      return sendError(res, reply.status, reply.text ?? `scripted status ${reply.status}`, retry);
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    if (reply.hang) return;
    const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)
      ?.include_usage;
    const measured =
      options.usage === "measured" && reply.usage === undefined
        ? {
            ...reply,
            usage: { input: recorded.promptTokens, output: 5, cached: recorded.cachedTokens },
          }
        : reply;
    for (const chunk of chunksFor(measured, recorded.model, ++counter, includeUsage === true)) {
      if (reply.chunkDelayMs && !res.destroyed) await sleep(reply.chunkDelayMs);
      const data = JSON.stringify(chunk);
      res.write(`data: ${data}\n\n`);
      reply.onChunk?.(data);
    }
    res.end("data: [DONE]\n\n");
  }

  const server = createServer((req, res) => {
    answer(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, `fake model failed: ${String(err)}`);
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    unmatched,
    tooLong,
    inFlight,
    quirks(quirks) {
      serverQuirks = { ...quirks };
    },
    forget() {
      requests.splice(0);
      cache.clear();
    },
    script(more) {
      for (const rule of Array.isArray(more) ? more : [more]) {
        rules.push({ ...rule, remaining: rule.times ?? 1, used: 0 });
      }
    },
    assertAllUsed() {
      const problems = rules
        .map((rule, i) => ({ rule, i }))
        .filter(({ rule }) => (rule.remaining === Infinity ? rule.used === 0 : rule.remaining > 0))
        .map(({ rule, i }) => `rule #${i} (${describe(rule)}) has ${rule.remaining} unused`);
      for (const req of unmatched) {
        problems.push(`no rule matched a request from ${nameOf(req) ?? "unknown agent"}`);
      }
      if (problems.length > 0) throw new Error(`fake model script:\n  ${problems.join("\n  ")}`);
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      // Hanging responses keep their sockets open; destroy them so close() can finish.
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function describe(rule: Rule): string {
  if (rule.label) return rule.label;
  if (rule.agent !== undefined) return `agent ${rule.agent}`;
  return rule.match ? "custom matcher" : "any request";
}

function record(body: Record<string, unknown>, cache: PrefixCache): RecordedRequest {
  const messages = Array.isArray(body.messages) ? (body.messages as RecordedMessage[]) : [];
  const tools = Array.isArray(body.tools)
    ? (body.tools as { function?: { name?: string } }[]).map((tool) => tool.function?.name ?? "")
    : [];
  const system = messages.find((message) => message.role === "system");
  const systemPrompt = typeof system?.content === "string" ? system.content : undefined;
  return {
    ...cache.serve(cacheText(body)),
    identity: identityOf(messages),
    body,
    messages,
    tools,
    model: typeof body.model === "string" ? body.model : "",
    systemPrompt,
    lastMessage: messages.at(-1),
    receivedAt: Date.now(),
  };
}

/** The chunks of one streamed response: reasoning, text deltas, tool calls in pieces, usage. */
function chunksFor(reply: Reply, model: string, n: number, includeUsage: boolean): object[] {
  const base = { id: `chatcmpl-fake-${n}`, object: "chat.completion.chunk", created: now(), model };
  const chunk = (delta: object, finishReason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  const chunks: object[] = [chunk({ role: "assistant", content: "" })];
  const field = reply.reasoningField ?? "reasoning_content";
  for (const piece of split(reply.reasoning ?? "", 3).filter((p) => p.length > 0)) {
    chunks.push(chunk({ [field]: piece }));
  }
  const text = reply.text ?? "";
  const pieces = reply.chunkSize
    ? splitEvery(text, reply.chunkSize)
    : reply.chunkText === false
      ? [text]
      : split(text, 3);
  for (const piece of pieces.filter((p) => p.length > 0)) chunks.push(chunk({ content: piece }));

  const calls = reply.toolCalls ?? [];
  const callChunk = (index: number, id: string | null | undefined, fn: object) => ({
    ...(reply.toolCallsWithoutIndex ? {} : { index }),
    ...(id === null ? {} : { id }),
    type: "function",
    function: fn,
  });
  const toolCalls = calls.map((call, index) => ({
    id: call.id === undefined ? `call_fake_${n}_${index}` : call.id,
    name: call.name,
    args: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
    index,
  }));
  if (reply.toolCallsInOneChunk) {
    chunks.push(
      chunk({
        tool_calls: toolCalls.map((c) => callChunk(0, c.id, { name: c.name, arguments: c.args })),
      }),
    );
  } else {
    for (const call of toolCalls) {
      const [first = "", ...rest] = split(call.args, 2);
      chunks.push(
        chunk({
          tool_calls: [callChunk(call.index, call.id, { name: call.name, arguments: first })],
        }),
      );
      for (const piece of rest) {
        const more = reply.toolCallsWithoutIndex ? {} : { index: call.index };
        chunks.push(chunk({ tool_calls: [{ ...more, function: { arguments: piece } }] }));
      }
    }
  }
  const usage = reply.usage ?? { input: 10, output: 5 };
  const usageField = {
    usage: {
      prompt_tokens: usage.input,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.output,
      ...(usage.cached === undefined
        ? {}
        : { prompt_tokens_details: { cached_tokens: usage.cached } }),
      ...(usage.reasoning === undefined
        ? {}
        : { completion_tokens_details: { reasoning_tokens: usage.reasoning } }),
    },
  };
  const mode = reply.usageMode ?? "separate";
  const finish = reply.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop");
  chunks.push({ ...chunk({}, finish), ...(mode === "last-chunk" ? usageField : {}) });
  if (mode === "separate" && includeUsage) chunks.push({ ...base, choices: [], ...usageField });
  return chunks;
}

/** Pieces of `size` code points. */
function splitEvery(text: string, size: number): string[] {
  const points = Array.from(text);
  const pieces: string[] = [];
  for (let i = 0; i < points.length; i += size) pieces.push(points.slice(i, i + size).join(""));
  return pieces;
}

/** Up to `parts` pieces of roughly equal length, never splitting a code point. */
function split(text: string, parts: number): string[] {
  const points = Array.from(text);
  if (points.length < parts) return [text];
  const size = Math.ceil(points.length / parts);
  const pieces: string[] = [];
  for (let i = 0; i < points.length; i += size) pieces.push(points.slice(i, i + size).join(""));
  return pieces;
}

function now(): number {
  return Math.floor(Date.now() / 1000);
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code: string | null = null,
): void {
  const body = JSON.stringify({ error: { message, type: "fake_error", param: null, code } });
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(body);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  try {
    const value: unknown = JSON.parse(Buffer.concat(parts).toString("utf8"));
    return typeof value === "object" && value !== null
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
