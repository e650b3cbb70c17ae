// Cost on blessed's screen buffer: the status bar shows the agent's and the tree's cost beside
// their tokens (reaped agents counted), the agent panel each agent's; without a price for the
// model, tokens only.
import { describe, expect, it } from "vitest";
import type { Pricing } from "../../../src/agents/cost.js";
import { renderBars } from "../../../src/ui/frame-parts.js";
import { renderAgentPanel } from "../../../src/ui/views/index.js";
import { agentCost } from "../../../src/agents/cost.js";
import { agent } from "./fixtures.js";
import { screenText } from "./helpers.js";

const theme = { color: true };
const priced: Pricing = { prices: { "gpt-test": { input: 2, cached_input: 0.5, output: 8 } } };
const unpriced: Pricing = { prices: { "another-model": { input: 2, output: 8 } } };

function tree() {
  // root: 30,000·2 + 2,000·8 per million = $0.076; kid: 1,000·2 + 100·8 = $0.0028;
  // reaped: 10,000 cached · 0.5 = $0.005 → the tree $0.0838.
  const root = agent({ name: "root", input_tokens: 30_000, output_tokens: 2_000 });
  const kid = agent({
    name: "kid",
    parent_id: root.id,
    tree_id: root.id,
    state: "running",
    input_tokens: 1_000,
    output_tokens: 100,
  });
  const reaped = agent({
    name: "old",
    parent_id: root.id,
    tree_id: root.id,
    state: "dead",
    input_tokens: 10_000,
    cached_tokens: 10_000,
    reaped_at: new Date(),
  });
  return { root, kid, reaped };
}

function statusBar(pricing: Pricing | undefined): string {
  const { root, kid, reaped } = tree();
  const { statusBar } = renderBars({
    agents: [root, kid],
    reaped: [reaped],
    root,
    current: kid,
    mode: "normal",
    keysHint: "^T agents",
    problem: undefined,
    ...(pricing ? { pricing } : {}),
    width: 140,
    theme,
  });
  return screenText([statusBar], 140);
}

describe("cost in the status bar", () => {
  it("shows the agent's cost beside its tokens and the tree's beside the tree's", () => {
    expect(statusBar(priced)).toContain("1.1k tok $0.0028 · tree 43k (10k cached) $0.0838");
  });

  it("shows tokens only without a price for the model", () => {
    for (const row of [statusBar(unpriced), statusBar(undefined)]) {
      expect(row).toContain("1.1k tok · tree 43k (10k cached) │");
      expect(row).not.toContain("$");
    }
  });
});

describe("cost in the agent panel", () => {
  const panel = (pricing: Pricing) => {
    const { root, kid } = tree();
    const costOf = (a: typeof root) => agentCost(a, pricing.prices, pricing.model);
    const { lines } = renderAgentPanel(
      [root, kid],
      root.id,
      Date.now(),
      100,
      4,
      theme,
      undefined,
      undefined,
      costOf,
    );
    return screenText(lines, 100);
  };

  it("shows each agent's cost beside its tokens", () => {
    const text = panel(priced);
    expect(text).toMatch(/root [0-9a-f]{8}.*32k tok \$0\.0760 · 0 calls/);
    expect(text).toMatch(/kid [0-9a-f]{8}.*1\.1k tok \$0\.0028 · 0 calls/);
  });

  it("shows tokens only without a price", () => {
    const text = panel(unpriced);
    expect(text).toMatch(/root [0-9a-f]{8}.*32k tok · 0 calls/);
    expect(text).not.toContain("$");
  });
});
