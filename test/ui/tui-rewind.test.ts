// /rewind in a real terminal (tmux), as a person uses it: the picker of the root's turns (newest
// first, what started each), Enter, the three ways and cancel, a confirmation naming the child
// forked since (not undone), y; then the rewound events behind one dim line that Enter on an empty
// input and a click open and shut; and the next request carries none of them. A running agent is
// interrupted only after the confirmation asks.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { RecordedRequest } from "../support/fake-model.js";
import { until } from "../support/until.js";
import { warrenEnv } from "../support/warren.js";
import { parseStyled } from "./sgr.js";
import { startTerminal } from "./tmux.js";
import { useTuiSuite } from "./tui-suite.js";

const { database, model, terminals } = useTuiSuite();

const lastUser = (req: RecordedRequest) =>
  String(req.messages.findLast((m) => m.role === "user")?.content ?? "");
const says = (marker: string) => (req: RecordedRequest) =>
  req.lastMessage?.role === "user" && lastUser(req).includes(marker);

/** warren in a fresh directory, its root's first turn ("first task") answered. */
async function startAfterFirstTurn() {
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-tui-rewind-")));
  const env = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
  const t = await startTerminal({ env, args: ["--new"], width: 110, height: 36, cwd });
  terminals.push(t);
  await t.waitFor(/\[root [0-9a-f]{8}\]/);
  await t.type("first task");
  await t.keys("Enter");
  await t.waitFor("● first answer", 30_000);
  return { t, cwd };
}

describe("/rewind in the TUI", { retry: 1 }, () => {
  it("picks a turn, confirms naming the child forked since, folds what it undid", async () => {
    // The child reports only once the root's second turn has ended: its mail starts turn 3.
    let secondEnded: () => void = () => {};
    const ended = new Promise<void>((resolve) => (secondEnded = resolve));
    model().script([
      { agent: "root", match: says("first task"), reply: { text: "first answer" } },
      {
        agent: "root",
        match: says("second task"),
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "scout", prompt: "Look.", context: "fresh" } },
          ],
        },
      },
      {
        agent: "root",
        match: (req) => req.lastMessage?.role === "tool",
        reply: () => {
          setTimeout(secondEnded, 1500);
          return { text: "second answer" };
        },
      },
      {
        agent: "scout",
        reply: async () => {
          await ended;
          return { text: "scout done" };
        },
      },
      { agent: "root", match: says("scout done"), reply: { text: "noted" } },
      { agent: "root", match: says("third task"), reply: { text: "third answer" } },
    ]);
    const { t, cwd } = await startAfterFirstTurn();
    try {
      await t.type("second task");
      await t.keys("Enter");
      await t.waitFor("● second answer", 30_000);
      await t.waitFor("● noted", 30_000);

      // The picker: newest first, each turn with what started it; Escape closes it.
      await t.type("/rewind");
      await t.keys("Enter");
      const list = await t.waitFor(/rewind root [0-9a-f]{8} — 3 turns/);
      const rows = list.split("\n");
      const row = (text: string) => rows.findIndex((r) => r.includes(text));
      expect(rows[row("✉ mail from scout")]).toMatch(
        /│› +3 +\d\d:\d\d:\d\d .* tok +✉ mail from scout: scout done/,
      );
      expect(rows[row("person: second task")]).toMatch(
        /│ +2 +\d\d:\d\d:\d\d .* tok +person: second task/,
      );
      expect(row("person: second task")).toBe(row("✉ mail from scout") + 1);
      expect(row("person: first task")).toBe(row("✉ mail from scout") + 2);
      await t.keys("Escape");
      await t.waitForGone("3 turns");

      await t.type("/rewind");
      await t.keys("Enter");
      await t.waitFor("3 turns");
      await t.keys("Down");
      await t.waitFor(/│› +2 /);
      await t.keys("Enter");
      const choices = await t.waitFor("4 cancel");
      expect(choices).toMatch(
        /› 1 files and conversation\s+│\n│ +2 files only\s+│\n│ +3 conversation only/,
      );
      await t.keys("Enter");
      const confirm = await t.waitFor("rewind? y/n");
      expect(confirm).toContain("rewind root");
      expect(confirm).toMatch(/to before turn 2 \(files and conversation\)/);
      expect(confirm).toMatch(
        /not undone \(already delivered or running on their own\):\s+│\n│ +forked scout [0-9a-f]{8}/,
      );
      await t.type("y");
      const done = await t.waitFor(
        /rewound root [0-9a-f]{8} to before turn 2; files: .*; conversation: 8 events rewound/,
      );
      // One dim line counting what the rewind marked (the fork call's event included).
      expect(done).toMatch(
        /▸ 8 events rewound at \d\d:\d\d — Enter \(empty input\) or click unfolds/,
      );
      expect(done).toContain("⟲ rewound to before turn 2");
      expect(done).not.toContain("second task");
      expect(done).not.toContain("noted");
      expect(done).toContain("first answer");

      // Enter on an empty input unfolds them (dim), and again folds them.
      await t.keys("Enter");
      const open = await t.waitFor("▾ ");
      expect(open).toContain("second task");
      expect(open).toContain("● noted");
      // Every character of the undone events is drawn dim.
      const { cells } = parseStyled(await t.styledScreen());
      const at = open.split("\n").findIndex((r) => r.includes("second task"));
      const undone = cells.filter((c) => c.row === at && c.char.trim() !== "");
      expect(undone.length).toBeGreaterThan(0);
      expect(undone.every((c) => c.dim)).toBe(true);
      await t.keys("Enter");
      await t.waitForGone("● noted");
      // A click on the fold's line opens it too.
      const shut = (await t.screen()).split("\n");
      const line = shut.findIndex((r) => r.includes("▸ "));
      await t.raw(`\x1b[<0;5;${line + 1}M\x1b[<0;5;${line + 1}m`);
      await t.waitFor("● noted");

      // The next turn's request carries none of what was rewound.
      await t.type("third task");
      await t.keys("Enter");
      await t.waitFor("● third answer", 30_000);
      const third = model().requests.find(says("third task"))!;
      const sent = JSON.stringify(third.messages);
      expect(sent).toContain("first task");
      expect(sent).not.toContain("second task");
      expect(sent).not.toContain("scout done");
      model().assertAllUsed();
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });

  it("asks before interrupting a running agent, then interrupts it and rewinds", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    model().script([
      { agent: "root", match: says("first task"), reply: { text: "first answer" } },
      {
        agent: "root",
        match: says("slow task"),
        reply: async () => {
          await held;
          return { text: "slow answer" };
        },
      },
    ]);
    const { t, cwd } = await startAfterFirstTurn();
    try {
      await t.type("slow task");
      await t.keys("Enter");
      await until("the slow request", () => model().requests.some(says("slow task")));
      await t.type("/rewind");
      await t.keys("Enter");
      await t.waitFor(/│› +2 .*person: slow task/);
      await t.keys("Enter");
      await t.waitFor("4 cancel");
      await t.type("3");
      const ask = await t.waitFor("agent is running: interrupt and rewind? y/n");
      expect(ask).toContain("to before turn 2 (conversation only)");
      await t.type("y");
      const done = await t.waitFor(
        /rewound root [0-9a-f]{8} to before turn 2; conversation: \d+ events rewound/,
        40_000,
      );
      expect(done).toMatch(/▸ \d+ events? rewound at/);
      expect(done).not.toContain("slow task");
      expect(done).toMatch(/○ idle/);
      model().assertAllUsed();
    } finally {
      release();
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
});
