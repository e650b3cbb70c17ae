// The model server's `/models` listing, used at start to check the configured model name. Many
// servers have no listing, and some (llama.cpp) answer to any name: so this only ever hints.
import OpenAI from "openai";
import { escapeLine } from "../text/escape.js";

export interface ModelListOptions {
  model: string;
  baseURL?: string;
  apiKey?: string;
  /** Default 3 s: a hint is not worth a long wait. */
  timeoutMs?: number;
}

export interface ListedModel {
  id: string;
  /** Tokens, when the server says (vLLM max_model_len, OpenRouter context_length, …). */
  contextWindow?: number;
}

/** The models the server lists, or undefined when it has no usable listing. */
export async function listModels(
  options: Omit<ModelListOptions, "model">,
): Promise<ListedModel[] | undefined> {
  const client = new OpenAI({
    apiKey: options.apiKey || "not-needed",
    baseURL: options.baseURL,
    timeout: options.timeoutMs ?? 3000,
    maxRetries: 0,
  });
  try {
    const models: ListedModel[] = [];
    for await (const model of client.models.list()) {
      if (typeof model?.id !== "string") continue;
      const window = contextWindowOf(model as unknown as Record<string, unknown>);
      models.push(window ? { id: model.id, contextWindow: window } : { id: model.id });
      if (models.length >= 1000) break;
    }
    return models.length > 0 ? models : undefined;
  } catch {
    return undefined; // no listing (404), unreachable, not JSON: the first turn will say more
  }
}

/** The context window in a listing entry, under the names servers use for it. */
function contextWindowOf(entry: Record<string, unknown>): number | undefined {
  const meta = (entry.meta ?? {}) as Record<string, unknown>;
  const candidates = [
    entry.context_window,
    entry.context_length,
    entry.max_model_len,
    entry.max_context_length,
    meta.n_ctx,
    meta.n_ctx_train,
  ];
  const found = candidates.find((v) => typeof v === "number" && Number.isInteger(v) && v > 0);
  return found as number | undefined;
}

/** One line for the person when the server lists models and `model` is not among them. */
export async function unlistedModelHint(options: ModelListOptions): Promise<string | undefined> {
  const ids = (await listModels(options))?.map((m) => m.id);
  if (!ids || ids.includes(options.model)) return undefined;
  const where = options.baseURL ?? "https://api.openai.com/v1";
  const shown = ids.slice(0, 5).join(", ") + (ids.length > 5 ? `, … (${ids.length} in all)` : "");
  return escapeLine(
    `model "${options.model}" is not listed by ${where} (it lists: ${shown}); ` +
      "check WARREN_MODEL if the first turn fails",
  );
}
