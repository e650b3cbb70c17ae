// What runAgent needs to run an agent's turns in the test's own process against the fake model:
// the config a person with only WARREN_MODEL and OPENAI_BASE_URL set would have.
import os from "node:os";
import type { Fence } from "../../src/agents/errors.js";
import type { Bus } from "../../src/bus/bus.js";
import { loadConfig } from "../../src/config/config.js";
import type { Db } from "../../src/db/client.js";
import { createOpenAIModel } from "../../src/llm/openai.js";
import type { TurnDeps } from "../../src/runtime/run-deps.js";

export function fakeTurnDeps(db: Db, bus: Bus, baseURL: string, fence?: Fence): TurnDeps {
  const config = loadConfig({ HOME: os.tmpdir(), WARREN_MODEL: "fake", OPENAI_BASE_URL: baseURL });
  return {
    db,
    bus,
    model: createOpenAIModel({ baseURL, maxRetries: 0 }),
    config,
    ...(fence ? { fence } : {}),
  };
}
