// The Model on the `openai` SDK: one streaming Chat Completions call, assembled into a ModelResponse.
// Works with any OpenAI-compatible server (OpenAI, Ollama, vLLM, …) through `baseURL`: parameters a
// server rejects are dropped and remembered, and a 429 is retried after the wait it asks for.
import OpenAI from "openai";
import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import {
  ModelError,
  type ChatMessage,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type ToolSpec,
} from "./model.js";
import {
  noSdkRetryOn429,
  OPTIONAL_PARAMS,
  rejectedParams,
  retryAfterMs,
  sleep,
  type OptionalParam,
} from "./server-quirks.js";
import { listModels, type ListedModel } from "./model-list.js";
import { nodeFetch } from "./node-fetch.js";
import { createAssembly, estimateTokens } from "./stream-assembly.js";
import { derived } from "../derived.js";

export interface OpenAIModelOptions {
  /** Missing means a local server that ignores keys; a placeholder is sent. */
  apiKey?: string;
  baseURL?: string;
  /** Time allowed until the response headers arrive, per attempt. Default 120 s. */
  timeoutMs?: number;
  /** SDK retries for 408/409/429/5xx and connection errors. Default 2. */
  maxRetries?: number;
  /** Longest silence allowed between stream chunks. Default min(60 s, timeoutMs). */
  streamIdleTimeoutMs?: number;
  /** 429 retries, each after the wait the server asks for. Default 5. */
  rateLimitRetries?: number;
  /** A 429 asking for a longer wait than this fails at once instead. Default 120 s. */
  maxRetryAfterMs?: number;
}

interface Settings {
  client: OpenAI;
  where: string;
  timeoutMs: number;
  idleMs: number;
  rateLimitRetries: number;
  maxRetryAfterMs: number;
  /** Optional parameters this server rejected once; never sent to it again. */
  dropped: Set<OptionalParam>;
}

class ParamsRejected extends Error {
  constructor(readonly params: OptionalParam[]) {
    super(`server rejected ${params.join(", ")}`);
  }
}

export function createOpenAIModel(options: OpenAIModelOptions = {}): Model {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const client = new OpenAI({
    apiKey: options.apiKey || "not-needed",
    baseURL: options.baseURL,
    timeout: timeoutMs,
    maxRetries: options.maxRetries ?? 2,
    fetch: noSdkRetryOn429(nodeFetch),
  });
  const settings: Settings = {
    client,
    where: client.baseURL,
    timeoutMs,
    idleMs: options.streamIdleTimeoutMs ?? Math.min(60_000, timeoutMs),
    rateLimitRetries: options.rateLimitRetries ?? 5,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 120_000,
    dropped: new Set(),
  };
  let listing: Promise<ListedModel[] | undefined> | undefined;
  return {
    complete: (request) => rejectOnAbort(request.signal, complete(settings, request)),
    async contextWindow(model) {
      listing ??= listModels({ baseURL: options.baseURL, apiKey: options.apiKey });
      return (await listing)?.find((m) => m.id === model)?.contextWindow;
    },
  };
}

/** One response, retrying a 429 as asked, and a 400 without the optional parameters it rejects. */
async function complete(settings: Settings, request: ModelRequest): Promise<ModelResponse> {
  let rateLimited = 0;
  while (true) {
    try {
      return await stream(settings, request);
    } catch (err) {
      if (err instanceof ParamsRejected) {
        // Each retry drops at least one more parameter, so this ends.
        const fresh = err.params.filter((param) => !settings.dropped.has(param));
        if (fresh.length === 0) throw toModelError(err.cause, settings);
        for (const param of fresh) settings.dropped.add(param);
        continue;
      }
      if (!(err instanceof OpenAI.APIError) || err.status !== 429) throw err;
      const asked = retryAfterMs(err.headers);
      // A failure to pass the pause on costs only the others' pause, never this request.
      if (asked !== undefined)
        await Promise.resolve(request.onRateLimited?.(asked)).catch(() => {});
      const failure = toModelError(err, settings);
      if (asked !== undefined && asked > settings.maxRetryAfterMs) {
        throw new ModelError(
          `${failure.message} (the server asks to retry after ${Math.ceil(asked / 1000)} s)`,
          429,
        );
      }
      if (rateLimited++ >= settings.rateLimitRetries) throw failure;
      await sleep(asked ?? Math.min(1000 * 2 ** rateLimited, 30_000), request.signal);
    }
  }
}

/** The SDK checks the signal only between retry sleeps; a caller's abort must win at once. */
function rejectOnAbort<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(abortError(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

async function stream(settings: Settings, request: ModelRequest): Promise<ModelResponse> {
  // One controller for both the caller's abort and our idle timer, so either stops the socket.
  const controller = new AbortController();
  const forwardAbort = () => controller.abort();
  request.signal.addEventListener("abort", forwardAbort, { once: true });
  let stalled = false;
  let idleTimer: NodeJS.Timeout | undefined;
  const armIdleTimer = () => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      stalled = true;
      controller.abort();
    }, settings.idleMs);
  };

  try {
    const params = toParams(request, settings.dropped);
    const chunks = await settings.client.chat.completions
      .create(params, { signal: controller.signal })
      .catch((err: unknown) => {
        throw paramsRejection(err, params) ?? err;
      });
    const assembly = createAssembly({ onText: request.onText, onReasoning: request.onReasoning });
    armIdleTimer();
    for await (const chunk of chunks) {
      armIdleTimer();
      assembly.add(chunk);
    }
    // The SDK ends the iteration quietly when its request is aborted, so look for why it ended.
    if (controller.signal.aborted) throw interruption(settings, request, stalled);
    return assembly.finish(() => estimateTokens(JSON.stringify(params.messages)));
  } catch (err) {
    if (err instanceof ModelError || (err instanceof Error && err.name === "AbortError")) throw err;
    if (err instanceof ParamsRejected) throw err;
    if (err instanceof OpenAI.APIError && err.status === 429) throw err; // complete() waits
    if (controller.signal.aborted) throw interruption(settings, request, stalled);
    throw toModelError(err, settings);
  } finally {
    clearTimeout(idleTimer);
    request.signal.removeEventListener("abort", forwardAbort);
  }
}

function toParams(
  request: ModelRequest,
  dropped: Set<OptionalParam>,
): ChatCompletionCreateParamsStreaming {
  const params: ChatCompletionCreateParamsStreaming = {
    model: request.model,
    messages: request.messages.map(toMessageParam),
    stream: true,
  };
  if (!dropped.has("stream_options")) params.stream_options = { include_usage: true };
  if (request.tools.length > 0) {
    params.tools = toolParams(request.tools);
    if (!dropped.has("parallel_tool_calls")) params.parallel_tool_calls = true;
  }
  return params;
}

/** A 400 naming optional parameters that were sent, as a ParamsRejected carrying the 400. */
function paramsRejection(
  err: unknown,
  params: ChatCompletionCreateParamsStreaming,
): ParamsRejected | undefined {
  if (!(err instanceof OpenAI.APIError) || (err.status !== 400 && err.status !== 422)) return;
  const sent = OPTIONAL_PARAMS.filter((param) => params[param] !== undefined);
  const body = err.error as { message?: unknown } | undefined;
  const message = `${typeof body?.message === "string" ? body.message : ""} ${err.message}`;
  const rejected = rejectedParams(message, sent);
  if (rejected.length === 0) return undefined;
  const wrapped = new ParamsRejected(rejected);
  wrapped.cause = err;
  return wrapped;
}

function toMessageParam(message: ChatMessage): ChatCompletionMessageParam {
  if (message.role !== "assistant") return message;
  const calls = message.tool_calls ?? [];
  if (calls.length === 0) return { role: "assistant", content: message.content };
  return {
    role: "assistant",
    content: message.content,
    tool_calls: calls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.arguments },
    })),
  };
}

/** The callers send the same tool list on every request (registry.ts): converted once per list. */
const toolParamsOf = new WeakMap<ToolSpec[], ChatCompletionTool[]>();

const toolParams = (tools: ToolSpec[]) =>
  derived(toolParamsOf, tools, (list) => list.map(toToolParam));

function toToolParam(tool: ToolSpec): ChatCompletionTool {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

function interruption(settings: Settings, request: ModelRequest, stalled: boolean): Error {
  if (request.signal.aborted || !stalled) return abortError(request.signal);
  return new ModelError(
    `model server at ${settings.where} stalled: no data for ${settings.idleMs} ms mid-stream`,
  );
}

function abortError(signal: AbortSignal): Error {
  const error = new Error("model call aborted", { cause: signal.reason });
  error.name = "AbortError";
  return error;
}

function toModelError(err: unknown, settings: Settings): ModelError {
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    return new ModelError(
      `model server at ${settings.where} did not answer within ${settings.timeoutMs} ms`,
    );
  }
  if (err instanceof OpenAI.APIConnectionError) {
    return new ModelError(
      `could not reach model server at ${settings.where}: ${oneLine(rootReason(err))}`,
    );
  }
  if (err instanceof OpenAI.APIError) {
    const body = err.error as { message?: unknown } | undefined;
    const message = typeof body?.message === "string" ? body.message : err.message;
    if (err.status === undefined) {
      return new ModelError(`model server reported an error: ${oneLine(message)}`);
    }
    return new ModelError(`model server answered ${err.status}: ${oneLine(message)}`, err.status);
  }
  // E.g. the connection dropped mid-stream ("terminated") or a chunk was not JSON.
  return new ModelError(`model stream from ${settings.where} failed: ${oneLine(rootReason(err))}`);
}

/** The innermost cause's message (or code): "connect ECONNREFUSED …" says more than "fetch failed". */
function rootReason(err: unknown): string {
  let current: unknown = err;
  let reason = String(err);
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    reason = current.message || (typeof code === "string" ? code : reason);
    current = current.cause;
  }
  return reason;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 300 ? `${flat.slice(0, 297)}...` : flat;
}
