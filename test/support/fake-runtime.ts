// What the tests that run warren's scheduler in-process share: a fake model server and a bus for
// the file, a config pointed at that model (from a HOME whose config.json holds what the test
// sets), and the deps a scheduler runs turns with.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { createBus, type Bus } from "../../src/bus/bus.js";
import { loadConfig, type Config } from "../../src/config/config.js";
import { createOpenAIModel } from "../../src/llm/openai.js";
import type { TurnDeps } from "../../src/runtime/run-deps.js";
import type { TestDatabase } from "./db.js";
import { startFakeModel, type FakeModel } from "./fake-model.js";

export function useFakeRuntime(database: () => TestDatabase) {
  let fake: FakeModel | undefined;
  let bus: Bus | undefined;
  beforeAll(async () => {
    fake = await startFakeModel();
    bus = await createBus(database().url);
  });
  afterAll(async () => {
    await bus?.close();
    await fake?.close();
  });
  const theFake = (): FakeModel => {
    if (!fake) throw new Error("the fake model exists only inside the file's tests");
    return fake;
  };
  const theBus = (): Bus => {
    if (!bus) throw new Error("the bus exists only inside the file's tests");
    return bus;
  };
  return {
    fake: theFake,
    bus: theBus,
    /** The config warren loads in `home` (a new one by default), its config.json holding `file`. */
    config(
      file?: Record<string, unknown>,
      home = mkdtempSync(path.join(os.tmpdir(), "warren-home-")),
    ): Config {
      if (file) {
        mkdirSync(path.join(home, ".config", "warren"), { recursive: true });
        writeFileSync(path.join(home, ".config", "warren", "config.json"), JSON.stringify(file));
      }
      return loadConfig({ HOME: home, WARREN_MODEL: "fake", OPENAI_BASE_URL: theFake().baseURL });
    },
    /** What a scheduler runs turns with: the file's database, bus and fake model. */
    deps(config: Config): TurnDeps {
      return {
        db: database().db,
        bus: theBus(),
        model: createOpenAIModel({ baseURL: theFake().baseURL, maxRetries: 0 }),
        config,
      };
    },
  };
}
