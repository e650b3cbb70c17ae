// Turns streamed Chat Completions chunks into one ModelResponse, coping with what OpenAI-compatible
// servers do differently: reasoning in `reasoning_content` or `reasoning` deltas or in <think>
// tags inside the content, tool calls with missing, empty or repeated ids and indexes, usage
// missing or sent in any chunk.
import { randomUUID } from "node:crypto";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { ModelResponse, ToolCall } from "./model.js";

export interface AssemblyHandlers {
  onText?: (delta: string) => void;
  onReasoning?: (delta: string) => void;
}

/** Delta fields some servers add beside OpenAI's (vLLM, DeepSeek, llama.cpp: reasoning_content;
 *  OpenRouter, Ollama, newer vLLM: reasoning). */
interface ReasoningDelta {
  reasoning_content?: unknown;
  reasoning?: unknown;
}

/** A tool-call piece as servers really send it: `index` and `id` may be missing. */
interface ToolCallPiece {
  index?: number;
  id?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

const OPEN = "<think>";
const CLOSE = "</think>";

/**
 * Splits content into answer text and <think> reasoning as it streams. A tag cut between two
 * chunks is held back until the next chunk decides it.
 */
function createThinkSplitter(emitText: (t: string) => void, emitThought: (t: string) => void) {
  let thinking = false;
  let held = "";
  const partialTagAt = (text: string, tag: string): number => {
    for (let keep = Math.min(tag.length - 1, text.length); keep > 0; keep--) {
      if (tag.startsWith(text.slice(-keep))) return text.length - keep;
    }
    return text.length;
  };
  return {
    push(content: string): void {
      let rest = held + content;
      held = "";
      while (rest) {
        const tag = thinking ? CLOSE : OPEN;
        const at = rest.indexOf(tag);
        if (at === -1) {
          const cut = partialTagAt(rest, tag);
          held = rest.slice(cut);
          rest = rest.slice(0, cut);
          if (rest) (thinking ? emitThought : emitText)(rest);
          return;
        }
        if (at > 0) (thinking ? emitThought : emitText)(rest.slice(0, at));
        thinking = !thinking;
        rest = rest.slice(at + tag.length);
      }
    },
    flush(): void {
      if (held) (thinking ? emitThought : emitText)(held);
      held = "";
    },
  };
}

export function createAssembly(handlers: AssemblyHandlers) {
  let text = "";
  let reasoning = "";
  const calls: ToolCall[] = [];
  /** Stream index → position in `calls`, for servers that do send indexes. */
  const byIndex = new Map<number, number>();
  let usage: ModelResponse["usage"] | undefined;
  let finishReason: string | null = null;

  const addReasoning = (delta: string) => {
    reasoning += delta;
    handlers.onReasoning?.(delta);
  };
  const splitter = createThinkSplitter((delta) => {
    text += delta;
    handlers.onText?.(delta);
  }, addReasoning);

  const addToolPiece = (piece: ToolCallPiece) => {
    const name = piece.function?.name ?? "";
    const args = piece.function?.arguments ?? "";
    const known = piece.index === undefined ? undefined : byIndex.get(piece.index);
    let call = known === undefined ? undefined : calls[known];
    // Without an index, a piece naming a function starts a new call; other pieces continue the
    // last one. Under an index already in use, a piece naming a function starts a new call when
    // its id differs, or when it has none and the call so far is complete JSON (servers that send
    // every call whole as index 0).
    const startsNew =
      call === undefined
        ? piece.index !== undefined || name !== "" || calls.length === 0
        : name !== "" &&
          call.name !== "" &&
          (piece.id ? piece.id !== call.id : isJson(call.arguments));
    if (!startsNew && call === undefined) call = calls.at(-1);
    if (startsNew || call === undefined) {
      call = { id: "", name: "", arguments: "" };
      calls.push(call);
      if (piece.index !== undefined) byIndex.set(piece.index, calls.length - 1);
    }
    if (piece.id) call.id = piece.id;
    if (name && !call.name) call.name = name;
    call.arguments += args;
  };

  return {
    add(chunk: ChatCompletionChunk): void {
      if (chunk.usage) {
        const cached = chunk.usage.prompt_tokens_details?.cached_tokens;
        const reasoningTokens = chunk.usage.completion_tokens_details?.reasoning_tokens;
        usage = {
          inputTokens: chunk.usage.prompt_tokens ?? 0,
          outputTokens: chunk.usage.completion_tokens ?? 0,
          ...(cached ? { cachedTokens: cached } : {}),
          ...(reasoningTokens ? { reasoningTokens } : {}),
        };
      }
      const choice = chunk.choices?.[0];
      if (!choice) return;
      if (choice.finish_reason) finishReason = choice.finish_reason;
      const delta = (choice.delta ?? {}) as ChatCompletionChunk.Choice.Delta & ReasoningDelta;
      // Servers that send both fields send the same text twice; take one.
      const thought =
        typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning;
      if (typeof thought === "string" && thought) addReasoning(thought);
      if (delta.content) splitter.push(delta.content);
      for (const piece of (delta.tool_calls ?? []) as ToolCallPiece[]) addToolPiece(piece);
    },
    /** `estimateInput` gives the request's size in tokens when the server reported no usage. */
    finish(estimateInput: () => number): ModelResponse {
      splitter.flush();
      const seen = new Set<string>();
      const toolCalls = calls.map((call) => {
        // Empty, missing or repeated ids would pair results with the wrong call: make them unique.
        const id = call.id && !seen.has(call.id) ? call.id : `call_${randomUUID().slice(0, 18)}`;
        seen.add(id);
        return { ...call, id };
      });
      const split = splitUnopenedThink(text);
      const thought = split.thought;
      // "<think>…</think>\n\nanswer": the blank lines belonged to the reasoning's layout.
      const answer = reasoning || thought ? split.answer.replace(/^\s+/, "") : split.answer;
      const response: ModelResponse = {
        text: answer,
        toolCalls,
        usage: usage ?? {
          inputTokens: estimateInput(),
          outputTokens: estimateTokens(reasoning + text + calls.map((c) => c.arguments).join("")),
          estimated: true,
        },
        finishReason,
      };
      const allReasoning = thought ? reasoning + thought : reasoning;
      if (allReasoning) response.reasoning = allReasoning;
      return response;
    },
  };
}

/**
 * Some chat templates put the opening <think> into the prompt, so the content holds only the
 * reasoning's end: "…</think>answer". What precedes a lone </think> is reasoning.
 */
function splitUnopenedThink(text: string): { answer: string; thought: string } {
  const at = text.indexOf(CLOSE);
  if (at === -1) return { answer: text, thought: "" };
  return { answer: text.slice(at + CLOSE.length), thought: text.slice(0, at) };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A rough token count (about four characters a token) for servers that report no usage. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
