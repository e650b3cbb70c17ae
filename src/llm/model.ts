// The Model interface: stream one response for a context and a tool list. Knows nothing of the database.

export interface ToolCall {
  id: string;
  name: string;
  /** Raw JSON text of the arguments exactly as the model produced it (may be malformed). */
  arguments: string;
}

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  model: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  signal: AbortSignal;
  /** Called with each piece of assistant text as it streams (for live display). */
  onText?: (delta: string) => void;
  /** Called with each piece of reasoning ("thinking") text as it streams, when the server sends any. */
  onReasoning?: (delta: string) => void;
  /**
   * The server answered 429 asking to wait `retryAfterMs` (its Retry-After): told before the
   * wait, so a caller may pause everyone's requests to that server (runtime/model-cap.ts).
   */
  onRateLimited?: (retryAfterMs: number) => Promise<void> | void;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens the server served from its prompt cache (part of inputTokens). */
  cachedTokens?: number;
  /** Output tokens spent on reasoning (part of outputTokens). */
  reasoningTokens?: number;
  /** The server reported no usage, so these are counted from the text. */
  estimated?: boolean;
}

export interface ModelResponse {
  /** The answer, without any reasoning. */
  text: string;
  toolCalls: ToolCall[];
  usage: Usage;
  finishReason: string | null;
  /** The model's reasoning, when the server streamed any; kept for people, never sent back. */
  reasoning?: string;
}

export interface Model {
  complete(request: ModelRequest): Promise<ModelResponse>;
  /** The context window (tokens) the server reports for `model`, if it reports one. */
  contextWindow?(model: string): Promise<number | undefined>;
}

/** A model failure worth showing a person in one line (status, server message). */
export class ModelError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "ModelError";
  }
}

/** Whether a model failure says the request was longer than the model's context window. */
export function isContextOverflow(err: unknown): boolean {
  if (!(err instanceof ModelError)) return false;
  return /context_length_exceeded|context length|context window|context size|maximum context|too many tokens|prompt is too long/i.test(
    err.message,
  );
}
