// The cost of agents and trees from the config's price table, its formatting, and the table's
// validation (a bad entry is one clear line).
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentCost, formatUsd, treeCost, type Prices } from "../../src/agents/cost.js";
import { ConfigError, loadConfig } from "../../src/config/config.js";

const prices: Prices = {
  "gpt-4.1-mini": { input: 0.4, cached_input: 0.1, output: 1.6 },
  "no-cache-price": { input: 2, output: 8 },
};

const row = (model: string | null, input: number, cached: number, output: number) => ({
  model,
  input_tokens: input,
  cached_tokens: cached,
  output_tokens: output,
});

describe("agentCost", () => {
  it("prices uncached input, cached input and output per million tokens", () => {
    // (1,000,000 − 400,000)·0.4 + 400,000·0.1 + 50,000·1.6 = 0.24 + 0.04 + 0.08 dollars
    expect(agentCost(row("gpt-4.1-mini", 1_000_000, 400_000, 50_000), prices)).toBeCloseTo(
      0.36,
      12,
    );
    expect(agentCost(row("gpt-4.1-mini", 0, 0, 0), prices)).toBe(0);
  });

  it("takes the config's model for an agent without its own, and input's price for cached", () => {
    expect(agentCost(row(null, 1000, 0, 0), prices, "gpt-4.1-mini")).toBeCloseTo(0.0004, 12);
    expect(agentCost(row(null, 1000, 0, 0), prices)).toBeUndefined();
    // No cached_input price: cached tokens cost what input does.
    expect(agentCost(row("no-cache-price", 1000, 600, 100), prices)).toBeCloseTo(
      (1000 * 2 + 100 * 8) / 1e6,
      12,
    );
  });

  it("has no cost for a model without a price; counters as strings are numbers", () => {
    expect(agentCost(row("unknown", 1000, 0, 10), prices, "gpt-4.1-mini")).toBeUndefined();
    const fromSql = {
      model: "gpt-4.1-mini",
      input_tokens: "2000",
      cached_tokens: "0",
      output_tokens: "0",
    };
    expect(agentCost(fromSql as never, prices)).toBeCloseTo(0.0008, 12);
  });
});

describe("treeCost", () => {
  it("sums the priced agents; undefined when none is priced", () => {
    const rows = [
      row("gpt-4.1-mini", 1_000_000, 0, 0), // $0.40
      row("no-cache-price", 0, 0, 1_000_000), // $8
      row("unknown", 5_000_000, 0, 5_000_000), // not priced: counts nothing
    ];
    expect(treeCost(rows, prices)).toBeCloseTo(8.4, 12);
    expect(treeCost([row("unknown", 1, 0, 1)], prices)).toBeUndefined();
    expect(treeCost([], prices)).toBeUndefined();
  });
});

describe("formatUsd", () => {
  it("shows 4 decimals under a dollar, 2 from a dollar up", () => {
    expect(formatUsd(0.0123)).toBe("$0.0123");
    expect(formatUsd(0.01234567)).toBe("$0.0123");
    expect(formatUsd(0.5)).toBe("$0.5000");
    expect(formatUsd(0)).toBe("$0.0000");
    expect(formatUsd(0.00001)).toBe("<$0.0001");
    expect(formatUsd(0.99999)).toBe("$1.00");
    expect(formatUsd(1)).toBe("$1.00");
    expect(formatUsd(12.345)).toBe("$12.35");
    expect(formatUsd(1234.5)).toBe("$1234.50");
  });
});

describe("prices in the config", () => {
  const configWith = (file: object) => {
    const home = mkdtempSync(path.join(os.tmpdir(), "warren-prices-"));
    mkdirSync(path.join(home, "warren"));
    writeFileSync(path.join(home, "warren", "config.json"), JSON.stringify(file));
    return () => loadConfig({ XDG_CONFIG_HOME: home });
  };

  it("reads the table; none is built in", () => {
    expect(loadConfig({ XDG_CONFIG_HOME: "/nonexistent" }).prices).toEqual({});
    const config = configWith({
      prices: { "gpt-4.1-mini": { input: 0.4, cached_input: 0.1, output: 1.6 } },
      budget: { usd: 0.5 },
      root_budget: { usd: 2 },
    })();
    expect(config.prices).toEqual({
      "gpt-4.1-mini": { input: 0.4, cached_input: 0.1, output: 1.6 },
    });
    expect(config.budget.usd).toBe(0.5);
    expect(config.rootBudget.usd).toBe(2);
  });

  it("refuses a bad entry with one line naming it", () => {
    const bad: [object, RegExp][] = [
      [{ prices: [] }, /^prices must be an object/],
      [{ prices: { m: 3 } }, /^prices\.m must be \{"input": N/],
      [{ prices: { m: { input: 1 } } }, /^prices\.m\.output must be a non-negative number/],
      [{ prices: { m: { input: "1", output: 1 } } }, /^prices\.m\.input must be a non-negative/],
      [{ prices: { m: { input: -1, output: 1 } } }, /^prices\.m\.input must be a non-negative/],
      [{ prices: { m: { input: 1, output: 1, cache: 1 } } }, /unknown field "cache"/],
      [{ budget: { usd: "1" } }, /^budget\.usd must be a positive number/],
      [{ root_budget: { usd: 0 } }, /^root_budget\.usd must be a positive number/],
    ];
    for (const [file, message] of bad) {
      const load = configWith(file);
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(message);
      try {
        load();
      } catch (err) {
        expect((err as Error).message).not.toContain("\n");
      }
    }
  });
});
