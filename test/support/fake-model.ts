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
  lastMessage: RecordedMessage | undefined;
}

export interface ScriptedToolCall {
  name: string;
  /** An object is JSON.stringify'd; a string is sent verbatim (so it may be malformed). */
  arguments: string | object;
  id?: string;
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
  usage?: { input: number; output: number };
  /** Split the text into several deltas. Default true. */
  chunkText?: boolean;
}

export interface Rule {
  match?: (req: RecordedRequest) => boolean;
  /** Shorthand matcher: the agent named in the system prompt (see agentNameOf). */
  agent?: string;
  reply: Reply | ((req: RecordedRequest) => Reply);
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
  script(rules: Rule | Rule[]): void;
  /** Throws listing every rule not used up and every unmatched request. */
  assertAllUsed(): void;
  close(): Promise<void>;
}

export interface FakeModelOptions {
  /** How the `agent` shorthand finds a request's agent. Default agentNameOf. */
  agentNameOf?: (req: RecordedRequest) => string | undefined;
}

/** The agent name from the runtime's system prompt line `Your name: NAME`. */
export function agentNameOf(req: RecordedRequest): string | undefined {
  return /^Your name: (.+)$/m.exec(req.systemPrompt ?? "")?.[1]?.trim();
}

interface ScriptedRule extends Rule {
  remaining: number;
  used: number;
}

export async function startFakeModel(options: FakeModelOptions = {}): Promise<FakeModel> {
  const nameOf = options.agentNameOf ?? agentNameOf;
  const rules: ScriptedRule[] = [];
  const requests: RecordedRequest[] = [];
  const unmatched: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let counter = 0;

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
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      return sendError(
        res,
        404,
        `fake model serves only POST /v1/chat/completions, not ${req.url}`,
      );
    }
    const body = await readJson(req);
    if (body === undefined) return sendError(res, 400, "request body is not JSON");
    const recorded = record(body);
    requests.push(recorded);
    if (body.stream !== true) return sendError(res, 400, "fake model answers only stream: true");

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
    const reply = typeof rule.reply === "function" ? rule.reply(recorded) : rule.reply;

    if (reply.delayMs) await sleep(reply.delayMs);
    if (reply.status !== undefined) {
      return sendError(res, reply.status, reply.text ?? `scripted status ${reply.status}`, {
        "retry-after-ms": String(reply.retryAfterMs ?? 0),
      });
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    if (reply.hang) return;
    const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)
      ?.include_usage;
    for (const chunk of chunksFor(reply, recorded.model, ++counter, includeUsage === true)) {
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
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

function record(body: Record<string, unknown>): RecordedRequest {
  const messages = Array.isArray(body.messages) ? (body.messages as RecordedMessage[]) : [];
  const tools = Array.isArray(body.tools)
    ? (body.tools as { function?: { name?: string } }[]).map((tool) => tool.function?.name ?? "")
    : [];
  const system = messages.find((message) => message.role === "system");
  return {
    body,
    messages,
    tools,
    model: typeof body.model === "string" ? body.model : "",
    systemPrompt: typeof system?.content === "string" ? system.content : undefined,
    lastMessage: messages.at(-1),
  };
}

/** The chunks of one streamed response: text deltas, then tool calls in pieces, then usage. */
function chunksFor(reply: Reply, model: string, n: number, includeUsage: boolean): object[] {
  const base = { id: `chatcmpl-fake-${n}`, object: "chat.completion.chunk", created: now(), model };
  const chunk = (delta: object, finishReason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  const chunks: object[] = [chunk({ role: "assistant", content: "" })];
  const text = reply.text ?? "";
  const pieces = reply.chunkText === false ? [text] : split(text, 3);
  for (const piece of pieces.filter((p) => p.length > 0)) chunks.push(chunk({ content: piece }));

  const calls = reply.toolCalls ?? [];
  calls.forEach((call, index) => {
    const args =
      typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
    const [first = "", ...rest] = split(args, 2);
    const id = call.id ?? `call_fake_${n}_${index}`;
    const name = call.name;
    chunks.push(
      chunk({
        tool_calls: [{ index, id, type: "function", function: { name, arguments: first } }],
      }),
    );
    for (const piece of rest)
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  chunks.push(chunk({}, calls.length > 0 ? "tool_calls" : "stop"));

  if (includeUsage) {
    const usage = reply.usage ?? { input: 10, output: 5 };
    chunks.push({
      ...base,
      choices: [],
      usage: {
        prompt_tokens: usage.input,
        completion_tokens: usage.output,
        total_tokens: usage.input + usage.output,
      },
    });
  }
  return chunks;
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
): void {
  const body = JSON.stringify({ error: { message, type: "fake_error", param: null, code: null } });
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
