// What a thread needs to run agents: its own pool, its own LISTEN connection and a model.
import { createBus, type Bus } from "../bus/bus.js";
import { listenUrlFor, type Config } from "../config/config.js";
import { closeDb, createDb, type Db } from "../db/client.js";
import type { WarningSink } from "../db/warning.js";
import { createOpenAIModel } from "../llm/openai.js";
import type { Model } from "../llm/model.js";

export interface Services {
  db: Db;
  bus: Bus;
  model: Model;
  close(): Promise<void>;
}

/** Each worker thread's pool opens connections on demand, up to this many (and one listener). */
export const THREAD_POOL_SIZE = 6;

export async function openServices(
  url: string,
  config: Config,
  onWarning?: WarningSink,
): Promise<Services> {
  // Relaxed commits: see DbOptions.relaxedCommits for which writes still commit durably and why.
  const db = createDb(url, {
    max: THREAD_POOL_SIZE,
    applicationName: "warren-worker",
    relaxedCommits: true,
    pooler: config.pooler === "transaction",
  });
  const bus = await createBus(listenUrlFor(config, url), { onWarning });
  const model = createOpenAIModel({
    apiKey: config.model.apiKey,
    baseURL: config.model.baseURL,
    timeoutMs: config.model.timeoutMs,
    maxRetries: config.model.maxRetries,
  });
  return {
    db,
    bus,
    model,
    async close() {
      await bus.close();
      await closeDb(db);
    },
  };
}
