// The one-line views around the scrollback, on blessed's screen buffer: status layer, spinner,
// separator, status bar, the too-small message and /help; all within any width.
import { describe, expect, it } from "vitest";
import {
  navInfo,
  renderHelp,
  renderSeparator,
  renderSpinner,
  renderStatusBar,
  renderStatusLayer,
  renderTooSmall,
  type StatusBarInfo,
} from "../../../src/ui/views/index.js";
import { agent, NOW } from "./fixtures.js";
import { helpRows } from "../../../src/ui/commands/table.js";
import { screenText, showWithin } from "./helpers.js";

const color = { color: true };
const HOSTILE = "x\x1b[2J{bold}evil{/bold}";

function tree() {
  const root = agent({
    name: "root",
    state: "waiting",
    activity: "waiting for 3 agents",
    created_at: new Date(NOW - 900_000),
  });
  const kid = (name: string, age: number, fields = {}) =>
    agent({
      name,
      parent_id: root.id,
      tree_id: root.id,
      depth: 1,
      created_at: new Date(NOW - age),
      ...fields,
    });
  const a = kid("alpha", 800_000, {
    state: "running",
    tool_calls: 4,
    input_tokens: 1200,
    output_tokens: 34,
    last_activity_at: new Date(NOW - 3_000),
  });
  const b = kid("bravo", 700_000, {
    state: "idle",
    tool_calls: 1,
    input_tokens: 15_000,
    output_tokens: 500,
    last_activity_at: new Date(NOW - 90_000),
  });
  const c = kid(HOSTILE, 600_000, { state: "dead" });
  const d = kid("中文名字😀", 500_000, { state: "idle" });
  return { root, a, b, c, d, all: [root, a, b, c, d] };
}

describe("status layer", () => {
  it("shows one line per awaited agent with its status glyph, counters and idle time", () => {
    const t = tree();
    const byId = new Map(t.all.map((x) => [x.id, x]));
    const lines = renderStatusLayer(
      [
        { agent_id: t.a.id, name: "alpha", status: "running" },
        { agent_id: t.b.id, name: "bravo", status: "received" },
        { agent_id: t.d.id, name: t.d.name, status: "idle" },
        { agent_id: t.c.id, name: t.c.name, status: "dead" },
      ],
      byId,
      NOW,
      100,
      color,
    );
    const rows = showWithin(lines, 100);
    expect(rows[0]).toMatch(/◐ running +alpha [0-9a-f]{8} +4 calls · 1.2k tok · 3s ago/);
    expect(rows[1]).toMatch(/✓ received +bravo [0-9a-f]{8} +1 call · 16k tok · 1m ago/);
    // In fork order (c was forked before d), whatever order the wait named them in.
    expect(rows[3]).toContain("○ idle");
    expect(rows[3]).toContain("中文名字😀");
    expect(rows[2]).toContain("✗ dead");
    expect(rows[2]).toContain("x\\x1b[2J{bold}evil{/bol…"); // names are cut to 24 columns here
    // Counters line up: the name column is as wide as the widest name.
    expect(rows[0]!.indexOf("4 calls")).toBe(rows[1]!.indexOf("1 call"));
  });

  it("still lists an awaited agent whose row is not loaded", () => {
    const lines = renderStatusLayer(
      [{ agent_id: "deadbeef-0000-4000-8000-000000000000", name: "ghost", status: "running" }],
      new Map(),
      NOW,
      60,
      color,
    );
    expect(screenText(lines, 60)).toContain("◐ running  ghost deadbeef");
  });
});

describe("spinner", () => {
  it("says what a busy agent is doing and for how long, and nothing when idle or dead", () => {
    const busy = agent({
      name: "w",
      state: "running",
      activity: "bash: npm test",
      busy_since: new Date(NOW - 75_000),
    });
    const frames = [0, 2, 4].map((f) => screenText([renderSpinner(busy, f, 60, color, NOW)], 60));
    expect(frames[0]).toBe("◴ bash: npm test · 1m · esc to interrupt");
    expect(new Set(frames.map((f) => f[0])).size).toBe(3);
    const thinking = agent({
      name: "w",
      state: "running",
      last_activity_at: new Date(NOW - 2_000),
    });
    expect(screenText([renderSpinner(thinking, 0, 60, color, NOW)], 60)).toContain("thinking · 2s");
    const waiting = agent({ name: "w", state: "waiting" });
    expect(screenText([renderSpinner(waiting, 0, 60, color, NOW)], 60)).toContain("waiting");
    expect(renderSpinner(agent({ name: "w", state: "idle" }), 0, 60, color)).toBe("");
    expect(renderSpinner(agent({ name: "w", state: "dead" }), 0, 60, color)).toBe("");
  });

  it("shows a hostile activity literally", () => {
    const busy = agent({ name: "w", state: "running", activity: `bash: echo ${HOSTILE}` });
    expect(screenText([renderSpinner(busy, 0, 80, color, NOW)], 80)).toContain(
      "echo x\\x1b[2J{bold}evil{/bold}",
    );
  });
});

describe("separator", () => {
  it("shows parent, siblings, the current agent and its children, ruled to the width", () => {
    const t = tree();
    const child = agent({ name: "grandkid", parent_id: t.b.id, tree_id: t.root.id });
    const all = [...t.all, child];
    const row = screenText([renderSeparator(navInfo(all, t.b.id)!, 100, color)], 100);
    expect(row).toMatch(
      new RegExp(
        `^── ↑root ←alpha \\[bravo ${t.b.id.slice(0, 8)}\\] →x\\\\x1b\\[2J\\{bold\\}evil\\{/bold\\} ↓1 ─+$`,
      ),
    );
    expect(row).toHaveLength(100);
  });

  it("leaves out what is not there (the root has no parent or siblings)", () => {
    const t = tree();
    const row = screenText([renderSeparator(navInfo(t.all, t.root.id)!, 60, color)], 60);
    expect(row).toMatch(new RegExp(`^── \\[root ${t.root.id.slice(0, 8)}\\] ↓4 ─+$`));
  });

  it("shortens names, then drops them, as the terminal narrows, never passing the width", () => {
    const t = tree();
    const long = agent({
      name: "a-very-long-agent-name-".repeat(2),
      parent_id: t.root.id,
      tree_id: t.root.id,
    });
    const all = [...t.all, long];
    for (let width = 10; width <= 120; width += 7) {
      const row = showWithin([renderSeparator(navInfo(all, t.b.id)!, width, color)], width)[0]!;
      expect(row.length).toBeGreaterThan(0);
      if (width >= 40) expect(row).toContain("[bravo");
    }
  });
});

describe("status bar", () => {
  const info = (over: Partial<StatusBarInfo> = {}): StatusBarInfo => {
    const t = tree();
    return {
      root: t.root,
      current: t.a,
      counts: { running: 1, waiting: 1, idle: 2, dead: 1 },
      tokens: 12_345,
      mode: "normal",
      keysHint: "^T agents · ^O mouse",
      ...over,
    };
  };

  it("shows tree, agent, state, model, tokens, counts and the keys hint at the right", () => {
    const i = info();
    const row = screenText([renderStatusBar(i, 120, color)], 120);
    expect(row).toContain(`tree ${i.root.tree_id.slice(0, 8)}`);
    expect(row).toContain(`alpha ${i.current.id.slice(0, 8)}`);
    expect(row).toContain("◐ running");
    expect(row).toContain("gpt-test");
    expect(row).toContain("12k tok");
    expect(row).toContain("◐1 ◌1 ○2 ✗1");
    expect(row).toMatch(/\^T agents · \^O mouse$/);
    expect(row).toHaveLength(120);
  });

  it("puts a connection problem and the mode first, and keeps them when narrow", () => {
    const row = screenText(
      [
        renderStatusBar(
          info({ mode: "capture", problem: "database unreachable — reconnecting…" }),
          120,
          color,
        ),
      ],
      120,
    );
    expect(row.indexOf("⚠ database unreachable — reconnecting…")).toBeLessThan(
      row.indexOf("CAPTURE"),
    );
    expect(row.indexOf("CAPTURE")).toBeLessThan(row.indexOf("alpha"));
    const narrow = screenText(
      [renderStatusBar(info({ problem: "database unreachable — reconnecting…" }), 45, color)],
      45,
    );
    expect(narrow).toContain("⚠ database unreachable");
    const dead = screenText([renderStatusBar(info({ mode: "dead" }), 50, color)], 50);
    expect(dead).toContain("✗ DEAD");
  });

  it("shortens a long model name, and the tree's figures, before dropping them", () => {
    const t = tree();
    const long = info({
      current: { ...t.a, model: "openrouter/anthropic/claude-3.5-sonnet-20241022" },
      tree: { tokens: 1_234_567, cached: 456_789 },
      keysHint: "^T agents · ^O mouse off (select text) · /help",
      keysHintShort: "^T agents · /help",
    });
    const wide = screenText([renderStatusBar(long, 200, color)], 200);
    expect(wide).toContain("openrouter/anthropic/claude-3.5-sonnet-20241022");
    expect(wide).toContain("tree 1.2M (457k cached)");
    expect(wide).toContain("^O mouse off");
    const at100 = screenText([renderStatusBar(long, 100, color)], 100);
    expect(at100).toContain("claude-3.5-sonn…");
    expect(at100).not.toContain("openrouter/");
    expect(at100).toContain("12k tok");
    expect(at100).toContain("◐1 ◌1 ○2 ✗1");
    expect(at100).toMatch(/\^T agents · \/help$/);
    const at80 = screenText([renderStatusBar(long, 80, color)], 80);
    expect(at80).not.toContain("claude");
    expect(at80).toContain("alpha");
  });

  it("fits every width, hostile names included", () => {
    const t = tree();
    for (let width = 5; width <= 140; width += 9) {
      showWithin([renderStatusBar(info({ current: t.c, problem: HOSTILE }), width, color)], width);
    }
    expect(screenText([renderStatusBar(info({ current: t.c }), 140, color)], 140)).toContain(
      "x\\x1b[2J{bold}evil{/bol…",
    );
  });
});

describe("plain screens and colors", () => {
  it("says the terminal is too small and how big it is", () => {
    expect(screenText(renderTooSmall(38, 8), 38)).toBe(
      "terminal too small: need 40×10\n(now 38×8)",
    );
    showWithin(renderTooSmall(12, 1), 12);
    expect(renderTooSmall(12, 1)).toHaveLength(1);
  });

  it("lists keys and commands with the panel key", () => {
    const help = renderHelp("Ctrl+T", undefined, helpRows()).join("\n");
    for (const needle of [
      "Ctrl+T",
      "Ctrl+Up",
      "Escape",
      "/capture",
      "/fork",
      "/kill",
      "/send",
      "/wait",
      "/reap",
      "/agents",
      "/model",
      "/exit",
    ]) {
      expect(help).toContain(needle);
    }
  });

  it("emits no color tags without color, and some with", () => {
    const t = tree();
    const byId = new Map(t.all.map((x) => [x.id, x]));
    const render = (theme: { color: boolean }) =>
      [
        ...renderStatusLayer(
          [{ agent_id: t.a.id, name: "alpha", status: "dead" }],
          byId,
          NOW,
          80,
          theme,
        ),
        renderSpinner(t.a, 0, 80, theme, NOW),
        renderSeparator(navInfo(t.all, t.a.id)!, 80, theme),
        renderStatusBar(
          {
            root: t.root,
            current: t.a,
            counts: { running: 1, waiting: 0, idle: 0, dead: 0 },
            tokens: 1,
            mode: "capture",
            keysHint: "k",
          },
          80,
          theme,
        ),
      ].join("\n");
    expect(render(color)).toMatch(/-fg\}/);
    expect(render({ color: false })).not.toMatch(/-(fg|bg)\}/);
  });
});
