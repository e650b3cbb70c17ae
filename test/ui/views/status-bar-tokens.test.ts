// The status bar's token figures on blessed's screen buffer: the agent's tokens, the tree's beside
// them, and the tree's cached input tokens when the server reported any.
import { describe, expect, it } from "vitest";
import { renderStatusBar, treeTokens, type StatusBarInfo } from "../../../src/ui/views/index.js";
import { agent } from "./fixtures.js";
import { screenText } from "./helpers.js";

const color = { color: true };

function tree(cached: { root: number; kid: number }) {
  const root = agent({
    name: "root",
    input_tokens: 30_000,
    output_tokens: 2_000,
    cached_tokens: cached.root,
  });
  const kid = agent({
    name: "kid",
    parent_id: root.id,
    tree_id: root.id,
    state: "running",
    input_tokens: 1_100,
    output_tokens: 100,
    cached_tokens: cached.kid,
    reasoning_tokens: 60,
  });
  return { root, kid };
}

function bar(rows: ReturnType<typeof tree>, width: number): string {
  const info: StatusBarInfo = {
    root: rows.root,
    current: rows.kid,
    counts: { running: 1, waiting: 0, idle: 1, dead: 0 },
    tokens: Number(rows.kid.input_tokens) + Number(rows.kid.output_tokens),
    tree: treeTokens([rows.root, rows.kid]),
    mode: "normal",
    keysHint: "^T agents",
  };
  return screenText([renderStatusBar(info, width, color)], width);
}

describe("status bar tokens", () => {
  it("shows the agent's tokens, then the tree's total with its cached input", () => {
    const row = bar(tree({ root: 12_000, kid: 800 }), 120);
    // 1,200 for the agent; 33,200 for the tree, of which 12,800 came from the server's cache.
    expect(row).toContain("1.2k tok · tree 33k (13k cached)");
  });

  it("leaves cached out while the server has reported none", () => {
    const row = bar(tree({ root: 0, kid: 0 }), 120);
    expect(row).toContain("1.2k tok · tree 33k │");
    expect(row).not.toContain("cached");
  });

  it("drops the figures together, before the agent's name, when the terminal is narrow", () => {
    const row = bar(tree({ root: 12_000, kid: 800 }), 40);
    expect(row).not.toContain("tok");
    expect(row).toContain("kid ");
  });
});
