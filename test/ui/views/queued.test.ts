// An agent queued for a slot of a capped model server (docs/model-cap.md) reads `queued` wherever
// its state is shown: the agent panel, a parent's status layer, the spinner and `warren ls`.
import { describe, expect, it } from "vitest";
import type { WaitStatusEntry } from "../../../src/agents/agents.sql.js";
import { renderAgentTable } from "../../../src/cli/agent-table.js";
import { QUEUED_ACTIVITY } from "../../../src/feed/types.js";
import { createColors } from "../../../src/text/format.js";
import { renderAgentPanel, renderSpinner, renderStatusLayer } from "../../../src/ui/views/index.js";
import { agent, NOW } from "./fixtures.js";
import { showWithin } from "./helpers.js";

const color = { color: true };

describe("a queued agent", () => {
  const root = agent({ name: "root", state: "waiting" });
  const queued = agent({
    name: "asker",
    parent_id: root.id,
    tree_id: root.tree_id,
    state: "running",
    activity: QUEUED_ACTIVITY,
  });
  const working = agent({
    name: "worker",
    parent_id: root.id,
    tree_id: root.tree_id,
    state: "running",
    activity: "thinking",
  });
  const all = [root, queued, working];
  const byId = new Map(all.map((a) => [a.id, a]));

  it("is `queued` in its parent's status layer, a working sibling `running`", () => {
    const wait: WaitStatusEntry[] = [queued, working].map((a) => ({
      agent_id: a.id,
      name: a.name,
      status: "running",
    }));
    const rows = showWithin(renderStatusLayer(wait, byId, NOW, 100, color), 100);
    expect(rows[0]).toMatch(/queued +asker/);
    expect(rows[1]).toMatch(/running +worker/);
  });

  it("says queued in the agent panel and on its spinner line", () => {
    const panel = showWithin(renderAgentPanel(all, root.id, NOW, 100, 10, color).lines, 100);
    expect(panel.find((line) => line.includes("asker"))).toMatch(/queued/);
    expect(showWithin([renderSpinner(queued, 0, 100, color, NOW)], 100)[0]).toMatch(/queued/);
  });

  it("is `queued` in warren ls's STATE column", () => {
    const lines = renderAgentTable(all, createColors(false), NOW);
    expect(lines.find((line) => line.includes("asker"))).toMatch(/asker \S+ +queued /);
    expect(lines.find((line) => line.includes("worker"))).toMatch(/worker \S+ +running /);
  });
});
