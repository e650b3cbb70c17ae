// The config file's keys beyond their environment forms (AUDIT item 8): timeout_seconds,
// max_retries, the per-model context_window map, budget, root_budget, limits and a profile's
// model and budget, read by loadConfig; the environment wins where both are given.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_BUDGET, loadConfig } from "../../src/config/config.js";
import { DEFAULT_LIMITS } from "../../src/agents/limits.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "warren-config-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function configWith(content: unknown, env: Record<string, string> = {}) {
  const file = path.join(dir, "config.json");
  await writeFile(file, JSON.stringify(content));
  return loadConfig({ WARREN_CONFIG: file, ...env });
}

describe("the config file", () => {
  it("has the documented defaults when empty", async () => {
    const config = await configWith({});
    expect(config.model.timeoutMs).toBe(120_000);
    expect(config.model.maxRetries).toBe(2);
    expect(config.model.contextWindows).toEqual({});
    expect(config.limits).toEqual(DEFAULT_LIMITS);
    expect(DEFAULT_LIMITS).toEqual({
      maxDepth: 3,
      maxChildren: 16,
      maxAgentsPerTree: 100,
      maxWaitSeconds: 3600,
      maxMessageBytes: 65536,
    });
    expect(config.budget).toEqual(DEFAULT_BUDGET);
    expect(DEFAULT_BUDGET).toEqual({ turns: 50, tool_calls: 500, tokens: 2_000_000 });
    expect(config.rootBudget).toEqual({});
    expect(config.fileAccess).toBe("cwd");
    expect(config.notify).toBe(true);
    expect(config.concurrency).toBe(256);
    expect(config.leaseSeconds).toBe(30);
  });

  it("reads timeout_seconds, max_retries and a per-model context_window map", async () => {
    const config = await configWith({
      timeout_seconds: 30,
      max_retries: 5,
      context_window: { "gpt-4.1-mini": 1_000_000, "qwen3:8b": 32_768 },
    });
    expect(config.model.timeoutMs).toBe(30_000);
    expect(config.model.maxRetries).toBe(5);
    expect(config.model.contextWindows).toEqual({ "gpt-4.1-mini": 1_000_000, "qwen3:8b": 32_768 });
    // WARREN_MODEL_TIMEOUT and WARREN_CONTEXT_WINDOW (every model: "*") win over the file.
    const env = await configWith(
      { timeout_seconds: 30, context_window: { a: 1000 } },
      { WARREN_MODEL_TIMEOUT: "7", WARREN_CONTEXT_WINDOW: "4096" },
    );
    expect(env.model.timeoutMs).toBe(7000);
    expect(env.model.contextWindows).toEqual({ a: 1000, "*": 4096 });
  });

  it("merges budget over the defaults, keeps root_budget apart, and keeps a profile's model and budget", async () => {
    const config = await configWith({
      budget: { turns: 5, wall_seconds: 60 },
      root_budget: { tokens: 1000, usd: 2 },
      limits: { maxMessageBytes: 100, maxDepth: 1 },
      profiles: { reviewer: { model: "gpt-4.1", budget: { tool_calls: 3 } } },
    });
    expect(config.budget).toEqual({
      turns: 5,
      tool_calls: 500,
      tokens: 2_000_000,
      wall_seconds: 60,
    });
    expect(config.rootBudget).toEqual({ tokens: 1000, usd: 2 });
    expect(config.limits).toMatchObject({ maxMessageBytes: 100, maxDepth: 1, maxChildren: 16 });
    expect(config.profiles.reviewer).toEqual({ model: "gpt-4.1", budget: { tool_calls: 3 } });
  });

  it("refuses bad values with one line naming the key", async () => {
    await expect(configWith({ max_retries: -1 })).rejects.toThrow(
      new ConfigError("max_retries must be a non-negative number"),
    );
    await expect(configWith({ context_window: { m: 10 } })).rejects.toThrow(
      "context_window.m must be a whole number of tokens (at least 256)",
    );
    await expect(configWith({ limits: { maxFoo: 1 } })).rejects.toThrow(/unknown limit "maxFoo"/);
    await expect(configWith({ root_budget: { usd: 0 } })).rejects.toThrow(
      "root_budget.usd must be a positive number of US dollars",
    );
  });
});
