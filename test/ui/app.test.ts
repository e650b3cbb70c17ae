// The TUI application on blessed's screen buffer (a fake terminal, no tmux): keys in, frames out.
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { appendEvent } from "../../src/agents/events.js";
import { createTree, forkAgent, killAgent } from "../../src/agents/tree.js";
import { createBus, type Bus } from "../../src/bus/bus.js";
import { loadConfig } from "../../src/config/config.js";
import { startTui, type Tui } from "../../src/ui/app.js";
import type { AgentRow } from "../../src/agents/agents.sql.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();
let bus: Bus;

beforeAll(async () => {
  bus = await createBus(database().url);
});
afterAll(async () => {
  await bus.close();
});

async function openTui(existing?: AgentRow) {
  const { db } = database();
  const root = existing ?? (await createTree(db, { name: "main" }));
  const stdin = Object.assign(new PassThrough(), { isTTY: false });
  const stdout = Object.assign(new PassThrough(), { isTTY: true, columns: 100, rows: 30 });
  stdout.resume();
  let screen = "";
  const tui: Tui = await startTui({
    db,
    bus,
    config: loadConfig({ HOME: "/nonexistent" }),
    root,
    env: { NO_COLOR: "1", TERM: "xterm-256color" },
    stdin: stdin as unknown as NodeJS.ReadStream,
    stdout: stdout as unknown as NodeJS.WriteStream,
    onFrame: (text) => void (screen = text().join("\n")),
  });
  const until = async (check: (s: string) => boolean) => {
    const deadline = Date.now() + 10_000;
    while (!check(screen)) {
      if (Date.now() > deadline) throw new Error(`no such frame; the screen was:\n${screen}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return screen;
  };
  return { tui, type: (keys: string) => void stdin.write(keys), until };
}

describe("the TUI on a screen buffer", () => {
  it("draws the layout, enters capture mode, opens the panel, quits on Ctrl+C twice", async () => {
    const { tui, type, until } = await openTui();
    const first = await until((s) => /\[main [0-9a-f]{8}\]/.test(s));
    expect(first).toContain("❯");
    type("/capture\r");
    await until((s) => s.includes("✎ capture ›") && s.includes("capture mode:"));
    type("a line no model sees\r");
    await until((s) => s.includes("│ a line no model sees"));
    type("\x14"); // Ctrl+T
    const panel = await until((s) => s.includes("agents — "));
    expect(panel).toMatch(/main [0-9a-f]{8}/);
    type("\x1b");
    await until((s) => !s.includes("agents — "));
    type("\x03");
    await until((s) => s.includes("Ctrl+C again to quit"));
    type("\x03");
    await tui.done;
  });
});

describe("a command's answer", () => {
  it("is shown below the command it answers (/reap, /model)", async () => {
    const { tui, type, until } = await openTui();
    await until((s) => /\[main [0-9a-f]{8}\]/.test(s));
    type("/reap\r");
    const reaped = await until((s) => s.includes("» /reap") && s.includes("nothing to reap"));
    expect(reaped.indexOf("» /reap")).toBeLessThan(reaped.indexOf("nothing to reap"));
    type("/model other-model\r");
    const changed = await until(
      (s) => s.includes("» /model other-model") && s.includes("model of this agent set to"),
    );
    expect(changed.indexOf("» /model other-model")).toBeLessThan(
      changed.indexOf("model of this agent set to"),
    );
    expect(changed.indexOf("nothing to reap")).toBeLessThan(
      changed.indexOf("» /model other-model"),
    );
    await tui.close();
  });
});

describe("the tree's token total", () => {
  it("still counts a reaped agent's tokens, live and after a restart", async () => {
    const { db } = database();
    const root = await createTree(db, { name: "main" });
    const child = await forkAgent(db, root.id, { name: "spent" });
    await db.execute(sql`update agents set input_tokens = 1000, output_tokens = 234
                          where id = ${child.id}`);
    await killAgent(db, { targetId: child.id, byAgentId: null });
    const first = await openTui(root);
    await first.until((s) => s.includes("tree 1.2k"));
    first.type("/reap\r");
    await first.until((s) => s.includes("reaped 1 dead agent;"));
    expect(await first.until((s) => s.includes("○1 ✗0"))).toContain("tree 1.2k");
    await first.tui.close();
    const again = await openTui(root);
    await again.until((s) => s.includes("○1 ✗0") && s.includes("tree 1.2k"));
    await again.tui.close();
  });
});

describe("warnings from elsewhere", () => {
  it("an outage is one status-bar line however often it repeats; a notice shows once", async () => {
    const { tui, until } = await openTui();
    await until((s) => /\[main [0-9a-f]{8}\]/.test(s));
    tui.warn({ kind: "outage", cause: "connection refused" });
    tui.warn({ kind: "outage", cause: "connection reset" });
    const away = await until((s) => s.includes("database unreachable — reconnecting…"));
    expect(away).not.toContain("connection refused");
    tui.warn({ kind: "outage-over" });
    await until((s) => !s.includes("database unreachable"));
    tui.warn({ kind: "notice", text: "claiming work failed: boom" });
    tui.warn({ kind: "notice", text: "claiming work failed: boom" });
    const noticed = await until((s) => s.includes("claiming work failed: boom"));
    expect(noticed.split("claiming work failed: boom")).toHaveLength(2);
    await tui.close();
  });
});

describe("a fan-in wider than the status layer", () => {
  it("shows the awaited agents that fit and one line counting the rest", async () => {
    const { db } = database();
    const root = await createTree(db, { name: "main" });
    await db.execute(sql`
      insert into agents (tree_id, parent_id, name, state, depth, created_at)
      select ${root.id}::uuid, ${root.id}::uuid, 'worker-' || lpad(i::text, 2, '0'), 'running', 1,
             now() + make_interval(secs => i / 1000.0)
        from generate_series(0, 39) as i`);
    await db.execute(sql`
      update agents r set state = 'waiting', busy_since = now(), activity = 'waiting for 40 agents',
             wait_status = (select jsonb_agg(jsonb_build_object(
                                   'agent_id', w.id, 'name', w.name,
                                   'status', case when w.name = 'worker-39' then 'received'
                                                  else 'running' end) order by w.name)
                              from agents w where w.parent_id = r.id)
       where r.id = ${root.id}`);
    const waiting = (await db.execute<AgentRow>(sql`select * from agents where id = ${root.id}`))
      .rows[0]!;
    const { tui, until } = await openTui(waiting);
    // 30 rows: the layer gets 12 of them, 11 agents and the count of the other 29.
    const screen = await until((s) => s.includes("more:"));
    const rows = screen.split("\n");
    expect(rows.filter((r) => /running +worker-\d\d /.test(r))).toHaveLength(11);
    expect(rows).toContainEqual(expect.stringMatching(/^ {2}… 29 more: 28 running · 1 received/));
    expect(screen).toContain("❯");
    await tui.close();
  });
});

describe("the first frame", () => {
  it("shows the status bar and the prompt before the feed is open and the history read", async () => {
    const { db } = database();
    const root = await createTree(db, { name: "main" });
    await appendEvent(db, root.id, "user", "an old question");
    const stdin = Object.assign(new PassThrough(), { isTTY: false });
    const stdout = Object.assign(new PassThrough(), { isTTY: true, columns: 100, rows: 30 });
    stdout.resume();
    // The listener connects only when the test says so: nothing below it can have happened.
    let connect: (b: Bus) => void = () => {};
    const listener = new Promise<Bus>((resolve) => (connect = resolve));
    const frames: string[] = [];
    let drawn: () => void = () => {};
    const firstFrame = new Promise<void>((resolve) => (drawn = resolve));
    const starting = startTui({
      db,
      bus: listener,
      config: loadConfig({ HOME: "/nonexistent" }),
      root,
      env: { NO_COLOR: "1", TERM: "xterm-256color" },
      stdin: stdin as unknown as NodeJS.ReadStream,
      stdout: stdout as unknown as NodeJS.WriteStream,
      onFrame: (text) => {
        frames.push(text().join("\n"));
        drawn();
      },
    });
    await firstFrame;
    expect(frames[0]).toContain("❯");
    expect(frames[0]).toMatch(/\[main [0-9a-f]{8}\]/);
    expect(frames[0]).not.toContain("an old question");
    connect(bus);
    const tui = await starting;
    const deadline = Date.now() + 10_000;
    while (!frames.at(-1)!.includes("an old question") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(frames.at(-1)).toContain("an old question");
    await tui.close();
  });
});
