// A failed agent on blessed's screen buffer (issue 40 §6): the status layer's entry and the agent
// panel's row say `failed` with why, in the alarm's red, never `idle`.
import { describe, expect, it } from "vitest";
import { renderAgentPanel, renderStatusLayer } from "../../../src/ui/views/index.js";
import { agent, NOW } from "./fixtures.js";
import { showWithin } from "./helpers.js";

const color = { color: true };
const WHY = "model error: 404 The model `gpt-missing` does not exist";

function tree() {
  const root = agent({ name: "root", state: "waiting", activity: "waiting for 2 agents" });
  const kid = (name: string, age: number, failure: string | null) =>
    agent({
      name,
      parent_id: root.id,
      tree_id: root.id,
      depth: 1,
      state: "idle",
      failure,
      created_at: new Date(NOW - age),
    });
  const lost = kid("lost", 900_000, WHY);
  const calm = kid("calm", 800_000, null);
  return { root, lost, calm, all: [root, lost, calm] };
}

describe("a failed agent", () => {
  it("is `failed` in the status layer, in red, beside an idle one", () => {
    const t = tree();
    const lines = renderStatusLayer(
      [
        { agent_id: t.lost.id, name: "lost", status: "failed" },
        { agent_id: t.calm.id, name: "calm", status: "idle" },
      ],
      new Map(t.all.map((a) => [a.id, a])),
      NOW,
      100,
      color,
    );
    const rows = showWithin(lines, 100);
    expect(rows[0]).toMatch(/⚠ failed +lost [0-9a-f]{8}/);
    expect(rows[1]).toMatch(/○ idle +calm [0-9a-f]{8}/);
    expect(lines[0]).toContain("{bold}{red-fg}⚠ failed");
  });

  it("shows in the panel as failed with why, and an idle one as idle", () => {
    const t = tree();
    const panel = renderAgentPanel(t.all, t.root.id, NOW, 120, 10, color);
    const rows = showWithin(panel.lines, 120);
    const lost = rows.find((row) => row.includes("lost"))!;
    expect(lost).toMatch(/⚠ lost [0-9a-f]{8} +failed: model error: 404 The model `gpt-missing`/);
    expect(lost).not.toMatch(/\bidle\b/);
    expect(rows.find((row) => row.includes("calm"))).toMatch(/○ calm [0-9a-f]{8} +idle /);
    expect(panel.lines.join("\n")).toMatch(/\{bold\}\{red-fg\}failed: model error/);
  });

  it("is idle again in the panel once its next turn cleared the failure", () => {
    const t = tree();
    const cleared = t.all.map((a) => (a.id === t.lost.id ? { ...a, failure: null } : a));
    const rows = showWithin(renderAgentPanel(cleared, t.root.id, NOW, 120, 10, color).lines, 120);
    expect(rows.find((row) => row.includes("lost"))).toMatch(/○ lost [0-9a-f]{8} +idle /);
  });
});
