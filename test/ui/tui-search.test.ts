// The TUI in a real terminal (tmux): /search finds a word a child said, among every agent of the
// tree, and Enter on the hit shows that child with its line in view — loaded from the database
// around the event, which lies far above the child's last page of history.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { warrenEnv } from "../support/warren.js";
import { startTerminal } from "./tmux.js";
import { useTuiSuite } from "./tui-suite.js";

const { database, model, terminals } = useTuiSuite();

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("search in the TUI", { retry: 1 }, () => {
  it("/search finds a child's word and Enter shows the child's line", async () => {
    model().script([
      {
        agent: "root",
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "scout", prompt: "look", context: "fresh" } },
          ],
        },
      },
      // The scout says it, then finishes with a short result (its text is not mailed on).
      {
        agent: "scout",
        reply: {
          text: "The kingfisher nests by the river.",
          toolCalls: [
            { name: "send", arguments: { to: "parent", message: "found it", final: true } },
          ],
        },
      },
      { agent: "root", reply: { text: "asked the scout" }, times: 2 },
    ]);
    const env = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
    const t = await startTerminal({ env, args: ["--new"], height: 30 });
    terminals.push(t);
    await t.waitFor(/\[root [0-9a-f]{8}\]/);
    await t.type("go look");
    await t.keys("Enter");
    await t.waitFor("asked the scout");
    const db = database().db;
    const scout = await until("the scout's answer", async () => {
      const rows = await db.execute<{ agent_id: string }>(
        sql`select agent_id from events where content like '%kingfisher%'`,
      );
      return rows.rows[0]?.agent_id;
    });
    // Far more history after the hit than a page (200 events): only a load around it shows it.
    await db.execute(sql`
      insert into events (agent_id, kind, content)
      select ${scout}, 'assistant', 'filler ' || i from generate_series(1, 300) i`);

    // Ctrl+F puts "/search " in the input; the word typed after it is the query.
    await t.keys("C-f");
    await t.type("kingfisher");
    await t.waitFor("/search kingfisher");
    await t.keys("Enter");
    const list = await t.waitFor(/scout [0-9a-f]{8}\s+\d\d:\d\d:\d\d\s+The kingfisher nests/);
    expect(list).toContain("search kingfisher — 1 match");

    await t.keys("Enter");
    const shown = await t.waitFor(
      (screen) => /\[scout [0-9a-f]{8}\]/.test(screen) && screen.includes("kingfisher nests"),
    );
    expect(shown).toContain("● The kingfisher nests by the river.");
    expect(shown).not.toContain("filler 300");
    // Scrolling down pages the newer history in, to the live end.
    for (let i = 0; i < 40; i++) await t.keys("NPage");
    await t.waitFor("filler 300");
    model().assertAllUsed();
  });
});
