// The agent panel on blessed's screen buffer: the tree in order with states, activity, counters
// and idle time; a silent running agent stands out; the selection is highlighted and kept visible.
import { describe, expect, it } from "vitest";
import type { AgentRow } from "../../../src/agents/agents.sql.js";
import { renderAgentPanel } from "../../../src/ui/views/index.js";
import { agent, NOW } from "./fixtures.js";
import { screenText, showWithin } from "./helpers.js";

const color = { color: true };

function tree() {
  const root = agent({
    name: "root",
    state: "waiting",
    activity: "waiting for 2 agents",
    created_at: new Date(NOW - 1_000_000),
    input_tokens: 20_000,
    output_tokens: 1_000,
    tool_calls: 3,
  });
  const at = (name: string, parent: AgentRow, age: number, fields: Partial<AgentRow> = {}) =>
    agent({
      name,
      parent_id: parent.id,
      tree_id: root.id,
      created_at: new Date(NOW - age),
      ...fields,
    });
  const scout = at("scout", root, 900_000, {
    state: "running",
    activity: "bash: grep -r TODO src",
    tool_calls: 12,
    last_activity_at: new Date(NOW - 4_000),
  });
  const quiet = at("quiet", root, 800_000, {
    state: "running",
    last_activity_at: new Date(NOW - 125_000),
  });
  const gone = at("gone", root, 700_000, { state: "dead", reaped_at: new Date(NOW - 1_000) });
  const dead = at("x\x1b[2J{bold}", root, 600_000, { state: "dead" });
  const sub = at("sub", scout, 500_000, { state: "idle", model: "small-model" });
  const orphan = at("orphan", gone, 400_000, { state: "idle" }); // its parent was reaped
  return {
    root,
    scout,
    quiet,
    gone,
    dead,
    sub,
    orphan,
    all: [orphan, sub, dead, gone, quiet, scout, root],
  };
}

describe("agent panel", () => {
  it("lists every unreaped agent as an indented tree, children under parents, oldest first", () => {
    const t = tree();
    const panel = renderAgentPanel(t.all, t.root.id, NOW, 110, 20, color);
    expect(panel.order).toEqual([
      t.root.id,
      t.scout.id,
      t.sub.id,
      t.quiet.id,
      t.dead.id,
      t.orphan.id,
    ]);
    const rows = showWithin(panel.lines, 110);
    const indentOf = (row: string) => row.search(/[◐◌○✗]/);
    expect(rows.map(indentOf)).toEqual([2, 4, 6, 4, 4, 4]);
    expect(rows[0]).toMatch(
      /◌ root [0-9a-f]{8} +waiting for 2 agents +gpt-test · 21k tok · 3 calls · 5s$/,
    );
    expect(rows[1]).toMatch(
      /◐ scout [0-9a-f]{8} +bash: grep -r TODO src +gpt-test · 0 tok · 12 calls · 4s$/,
    );
    expect(rows[2]).toMatch(/○ sub [0-9a-f]{8} +idle +small-model · /);
    expect(rows[4]).toContain("✗ x\\x1b[2J{bold}");
    expect(rows.join("\n")).not.toContain("gone");
  });

  it("keeps its order for a new list of the same tree, and orders again when the tree changes", () => {
    const t = tree();
    const first = renderAgentPanel(t.all, t.root.id, NOW, 110, 20, color);
    // Rows replaced in place (tokens, activity): the same order, the new rows' text.
    const busier = t.all.map((a) =>
      a === t.quiet ? { ...a, activity: "bash: make test", tool_calls: 7 } : { ...a },
    );
    const second = renderAgentPanel(busier, t.root.id, NOW, 110, 20, color);
    expect(second.order).toEqual(first.order);
    expect(showWithin(second.lines, 110)[3]).toMatch(
      /◐ quiet [0-9a-f]{8} +bash: make test .* 7 calls/,
    );
    // An agent now younger than its sibling, one reaped, one moved, one added: ordered again.
    const younger = busier.map((a) =>
      a.id === t.quiet.id ? { ...a, created_at: new Date(NOW - 100) } : a,
    );
    expect(renderAgentPanel(younger, t.root.id, NOW, 110, 20, color).order).toEqual([
      t.root.id,
      t.scout.id,
      t.sub.id,
      t.dead.id,
      t.orphan.id,
      t.quiet.id,
    ]);
    const reaped = younger.map((a) => (a.id === t.sub.id ? { ...a, reaped_at: new Date(NOW) } : a));
    expect(renderAgentPanel(reaped, t.root.id, NOW, 110, 20, color).order).not.toContain(t.sub.id);
    const moved = reaped.map((a) => (a.id === t.orphan.id ? { ...a, parent_id: t.dead.id } : a));
    const movedRows = showWithin(
      renderAgentPanel(moved, t.root.id, NOW, 110, 20, color).lines,
      110,
    );
    expect(movedRows[3]!.search(/○ orphan/)).toBeGreaterThan(movedRows[2]!.search(/✗ x/));
    const more = [
      ...moved,
      agent({ name: "late", parent_id: t.root.id, created_at: new Date(NOW) }),
    ];
    expect(renderAgentPanel(more, t.root.id, NOW, 110, 20, color).order.at(-1)).toBe(
      more.at(-1)!.id,
    );
  });

  it("makes a running agent that has been silent for over a minute stand out", () => {
    const t = tree();
    const panel = renderAgentPanel(t.all, t.root.id, NOW, 110, 20, color);
    const quietRow = screenText(panel.lines, 110).split("\n")[3]!;
    expect(quietRow).toContain("! 2m silent");
    expect(panel.lines[3]).toContain("{yellow-fg}! 2m silent");
    expect(screenText(panel.lines, 110).split("\n")[1]).not.toContain("!");
  });

  it("shows an isolated child's edits in its worktree, and nothing once it is removed", () => {
    const root = agent({ name: "root", state: "waiting" });
    const worktree = {
      path: "/r/.warren/worktrees/w",
      branch: "warren/w-1",
      base: "abc",
      repo: "/r",
      changes: { files: 2, added: 12, removed: 3 },
    };
    const child = (name: string, removed?: boolean) =>
      agent({ name, parent_id: root.id, tree_id: root.id, worktree: { ...worktree, removed } });
    const text = screenText(
      renderAgentPanel([root, child("w1"), child("w2", true)], root.id, NOW, 110, 20, color).lines,
      110,
    );
    const [w1, w2] = ["w1", "w2"].map((n) => text.split("\n").find((l) => l.includes(n))!);
    expect(w1).toContain("2 files +12 -3");
    expect(w2).not.toContain("files");
  });

  it("highlights the selection across the whole row", () => {
    const t = tree();
    const panel = renderAgentPanel(t.all, t.sub.id, NOW, 80, 20, { color: false });
    const rows = showWithin(panel.lines, 80);
    expect(rows[2]!.startsWith("›")).toBe(true);
    expect(rows.filter((r) => r.startsWith("›"))).toHaveLength(1);
    expect(panel.lines[2]).toContain("{inverse}");
    expect(panel.lines[1]).not.toContain("{inverse}");
  });

  it("scrolls to keep the selection visible when the tree is taller than the panel", () => {
    const root = agent({ name: "root", created_at: new Date(NOW - 10_000_000) });
    const kids = Array.from({ length: 40 }, (_, i) =>
      agent({
        name: `kid-${String(i).padStart(2, "0")}`,
        parent_id: root.id,
        tree_id: root.id,
        created_at: new Date(NOW - 5_000_000 + i * 1000),
      }),
    );
    const all = [root, ...kids];
    for (const pick of [0, 10, 25, 40]) {
      const selected = all[pick]!;
      const panel = renderAgentPanel(all, selected.id, NOW, 70, 8, color);
      expect(panel.lines).toHaveLength(8);
      expect(panel.order).toHaveLength(41);
      const rows = showWithin(panel.lines, 70);
      expect(rows.find((r) => r.startsWith("›"))).toContain(selected.name);
    }
    const top = showWithin(renderAgentPanel(all, root.id, NOW, 70, 8, color).lines, 70);
    expect(top[0]).toContain("root");
    const bottom = showWithin(renderAgentPanel(all, kids[39]!.id, NOW, 70, 8, color).lines, 70);
    expect(bottom[7]).toContain("kid-39");
  });

  it("fits narrow and wide panels, with wide names", () => {
    const t = tree();
    const wide = agent({
      name: "中文名字😀👍🏽",
      parent_id: t.root.id,
      tree_id: t.root.id,
      state: "running",
      activity: "表情 ".repeat(30),
    });
    for (let width = 12; width <= 130; width += 11) {
      const rows = showWithin(
        renderAgentPanel([...t.all, wide], wide.id, NOW, width, 10, color).lines,
        width,
      );
      if (width >= 40) expect(rows.join("\n")).toContain("中文名字😀👍🏽");
    }
  });
});
