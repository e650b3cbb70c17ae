// Every view keeps within its width for arbitrary text: random mixes of ASCII, CJK, emoji,
// combining marks, control characters and blessed tags, at random widths (seeded, repeatable).
import { describe, expect, it } from "vitest";
import type { EventRow } from "../../../src/agents/events.sql.js";
import {
  createScrollbackView,
  navInfo,
  renderAgentPanel,
  renderSeparator,
  renderSpinner,
  renderStatusBar,
  renderStatusLayer,
  type ScrollEntry,
} from "../../../src/ui/views/index.js";
import { agent, event, NOW } from "./fixtures.js";
import { random, showWithin } from "./helpers.js";

const PIECES = [
  "word",
  " ",
  "  ",
  "\n",
  "\t",
  "中文",
  "表情",
  "😀",
  "👍🏽",
  "e\u0301",
  "ｈｉ",
  "\x1b[2J",
  "\x1b]0;t\x07",
  "{bold}",
  "{/bold}",
  "{red-fg}",
  "\u0000",
  "\r",
  "averyveryveryverylongwordwithoutspaces",
  "…",
  "─",
  "→",
];

function text(next: () => number, max: number): string {
  let out = "";
  const n = Math.floor(next() * max);
  for (let i = 0; i < n; i++) out += PIECES[Math.floor(next() * PIECES.length)];
  return out;
}

describe("views within their width", () => {
  it("holds for random text at random widths", () => {
    const next = random(42);
    const kinds: EventRow["kind"][] = [
      "user",
      "assistant",
      "tool_result",
      "capture",
      "error",
      "killed",
      "system",
    ];
    for (let round = 0; round < 40; round++) {
      const width = 5 + Math.floor(next() * 110);
      const name = text(next, 6) || "n";
      const root = agent({
        name: text(next, 4) || "root",
        state: "waiting",
        activity: text(next, 5),
      });
      const kid = agent({
        name,
        parent_id: root.id,
        tree_id: root.id,
        state: "running",
        activity: text(next, 8),
        model: text(next, 3) || null,
      });
      const all = [root, kid];
      const entries: ScrollEntry[] = [
        ...kinds.map((kind) => ({ kind: "event" as const, event: event(kind, text(next, 30)) })),
        {
          kind: "event",
          event: event("tool_call", "", {
            name: text(next, 2) || "t",
            arguments: JSON.stringify({ a: text(next, 10) }),
          }),
        },
        {
          kind: "event",
          event: event("tool_call", "", {
            name: "bash",
            arguments: JSON.stringify({ command: text(next, 20) }),
          }),
        },
        {
          kind: "event",
          event: event("mail_in", text(next, 10), { from: kid.id, from_name: name }),
        },
        { kind: "stream", agentId: kid.id, text: text(next, 30), reasoning: text(next, 20) },
        { kind: "notice", id: round, level: "error", text: text(next, 10) },
        { kind: "pending", id: round, text: text(next, 10) },
      ];
      const lines = [
        ...createScrollbackView({ color: true }).render(entries, width, 10_000, 0).lines,
        ...renderStatusLayer(
          [{ agent_id: kid.id, name, status: "running" }],
          new Map(all.map((a) => [a.id, a])),
          NOW,
          width,
          { color: true },
        ),
        renderSpinner(kid, round, width, { color: true }, NOW),
        renderSeparator(navInfo(all, kid.id)!, width, { color: true }),
        renderStatusBar(
          {
            root,
            current: kid,
            counts: { running: 1, waiting: 1, idle: 0, dead: 0 },
            tokens: 5,
            mode: "capture",
            keysHint: text(next, 4),
            problem: text(next, 4),
          },
          width,
          { color: true },
        ),
        ...renderAgentPanel(all, kid.id, NOW, width, 5, { color: true }).lines,
      ];
      // No raw control character ever reaches blessed.
      // eslint-disable-next-line no-control-regex -- that is the point
      expect(lines.join("\n")).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
      showWithin(lines, width);
    }
  });
});
