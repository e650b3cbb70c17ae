// The Model on the `openai` SDK: one streaming Chat Completions call, assembled into a ModelResponse.
// Works with any OpenAI-compatible server (OpenAI, Ollama, vLLM, …) through `baseURL`.
import OpenAI from "openai";
import type {
  ChatCompletionChunk,
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
  type ToolCall,
  type ToolSpec,
} from "./model.js";

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
}

interface Settings {
  client: OpenAI;
  where: string;
  timeoutMs: number;
  idleMs: number;
}

export function createOpenAIModel(options: OpenAIModelOptions = {}): Model {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const client = new OpenAI({
    apiKey: options.apiKey || "not-needed",
    baseURL: options.baseURL,
    timeout: timeoutMs,
    maxRetries: options.maxRetries ?? 2,
  });
  const settings: Settings = {
    client,
    where: client.baseURL,
    timeoutMs,
    idleMs: options.streamIdleTimeoutMs ?? Math.min(60_000, timeoutMs),
  };
  return { complete: (request) => rejectOnAbort(request.signal, stream(settings, request)) };
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
    const chunks = await settings.client.chat.completions.create(toParams(request), {
      signal: controller.signal,
    });
    const assembly = createAssembly(request.onText);
    armIdleTimer();
    for await (const chunk of chunks) {
      armIdleTimer();
      assembly.add(chunk);
    }
    // The SDK ends the iteration quietly when its request is aborted, so look for why it ended.
    if (controller.signal.aborted) throw interruption(settings, request, stalled);
    return assembly.finish();
  } catch (err) {
    if (err instanceof ModelError || (err instanceof Error && err.name === "AbortError")) throw err;
    if (controller.signal.aborted) throw interruption(settings, request, stalled);
    throw toModelError(err, settings);
  } finally {
    clearTimeout(idleTimer);
    request.signal.removeEventListener("abort", forwardAbort);
  }
}

function toParams(request: ModelRequest): ChatCompletionCreateParamsStreaming {
  const params: ChatCompletionCreateParamsStreaming = {
    model: request.model,
    messages: request.messages.map(toMessageParam),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) params.tools = request.tools.map(toToolParam);
  return params;
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

function toToolParam(tool: ToolSpec): ChatCompletionTool {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/** Accumulates streamed deltas: text in order, tool calls keyed by their `index`. */
function createAssembly(onText: ((delta: string) => void) | undefined) {
  let text = "";
  const calls = new Map<number, ToolCall>();
  const usage = { inputTokens: 0, outputTokens: 0 };
  let finishReason: string | null = null;

  return {
    add(chunk: ChatCompletionChunk): void {
      if (chunk.usage) {
        usage.inputTokens = chunk.usage.prompt_tokens ?? 0;
        usage.outputTokens = chunk.usage.completion_tokens ?? 0;
      }
      const choice = chunk.choices?.[0];
      if (!choice) return;
      if (choice.finish_reason) finishReason = choice.finish_reason;
      const content = choice.delta?.content;
      if (content) {
        text += content;
        onText?.(content);
      }
      for (const piece of choice.delta?.tool_calls ?? []) {
        const call = calls.get(piece.index) ?? { id: "", name: "", arguments: "" };
        if (piece.id) call.id = piece.id;
        if (piece.function?.name) call.name = piece.function.name;
        call.arguments += piece.function?.arguments ?? "";
        calls.set(piece.index, call);
      }
    },
    finish(): ModelResponse {
      const toolCalls = [...calls.entries()]
        .sort(([a], [b]) => a - b)
        .map(([index, call]) => ({ ...call, id: call.id || `call_${index}_${Date.now()}` }));
      return { text, toolCalls, usage, finishReason };
    },
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
