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

/** The model ids the server lists, or undefined when it has no usable listing. */
export async function listModels(
  options: Omit<ModelListOptions, "model">,
): Promise<string[] | undefined> {
  const client = new OpenAI({
    apiKey: options.apiKey || "not-needed",
    baseURL: options.baseURL,
    timeout: options.timeoutMs ?? 3000,
    maxRetries: 0,
  });
  try {
    const ids: string[] = [];
    for await (const model of client.models.list()) {
      if (typeof model?.id === "string") ids.push(model.id);
      if (ids.length >= 1000) break;
    }
    return ids.length > 0 ? ids : undefined;
  } catch {
    return undefined; // no listing (404), unreachable, not JSON: the first turn will say more
  }
}

/** One line for the person when the server lists models and `model` is not among them. */
export async function unlistedModelHint(options: ModelListOptions): Promise<string | undefined> {
  const ids = await listModels(options);
  if (!ids || ids.includes(options.model)) return undefined;
  const where = options.baseURL ?? "https://api.openai.com/v1";
  const shown = ids.slice(0, 5).join(", ") + (ids.length > 5 ? `, … (${ids.length} in all)` : "");
  return escapeLine(
    `model "${options.model}" is not listed by ${where} (it lists: ${shown}); ` +
      "check WARREN_MODEL if the first turn fails",
  );
}
