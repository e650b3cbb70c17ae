// The TUI in a real terminal (tmux): /tasks shows the tree's task board and follows it live — a
// task claimed by another process's write shows as held, with its holder — and the status bar
// counts the board's tasks.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { warrenEnv } from "../support/warren.js";
import { startTerminal } from "./tmux.js";
import { useTuiSuite } from "./tui-suite.js";

const { database, model, terminals } = useTuiSuite();

describe("the task board in the TUI", { retry: 1 }, () => {
  it("/tasks shows the board live, and the status bar counts it", async () => {
    model().script([
      {
        agent: "root",
        reply: { toolCalls: [{ name: "task_add", arguments: { title: "index the corpus" } }] },
      },
      { agent: "root", reply: { text: "planned" } },
    ]);
    const env = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
    const t = await startTerminal({ env, args: ["--new"], height: 30 });
    terminals.push(t);
    await t.waitFor(/\[root [0-9a-f]{8}\]/);
    await t.type("plan it");
    await t.keys("Enter");
    await t.waitFor("planned");
    await t.waitFor("tasks 0/1");

    await t.type("/tasks");
    await t.keys("Enter");
    const board = await t.waitFor(/pending\s+[0-9a-f]{8} index the corpus/);
    expect(board).toContain("tasks — 1 task: 1 pending");

    // Claimed elsewhere (as a worker's task_claim would): the open board follows.
    const db = database().db;
    await db.execute(sql`
      update tasks set state = 'claimed', claimed_at = now(),
                       claimed_by = (select id from agents where parent_id is null limit 1)`);
    const held = await t.waitFor(
      /claimed\s+[0-9a-f]{8} index the corpus\s+held by root [0-9a-f]{8}/,
    );
    expect(held).toContain("tasks 0/1 (1 held)");

    await db.execute(sql`update tasks set state = 'done', result = 'indexed 40 files'`);
    await t.waitFor(
      /done\s+[0-9a-f]{8} index the corpus\s+by root [0-9a-f]{8}\s+→ indexed 40 files/,
    );
    await t.waitFor("tasks 1/1");

    await t.keys("Escape");
    await t.waitFor((screen) => !screen.includes("tasks — "));
    model().assertAllUsed();
  });
});
