// The TUI's input in a real terminal (tmux): editing keys, Ctrl+J newlines, Alt+arrow word motion,
// history, bracketed paste (never submitted, large ones collapsed, sent whole), /wait, NO_COLOR.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { type RecordedRequest } from "../support/fake-model.js";
import { warrenEnv } from "../support/warren.js";
import { startTerminal } from "./tmux.js";
import { useTuiSuite } from "./tui-suite.js";

const { database, model, terminals } = useTuiSuite();

async function open(options: { color?: boolean } = {}) {
  const env = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
  if (options.color) delete env.NO_COLOR;
  const terminal = await startTerminal({ env, args: ["--new"] });
  terminals.push(terminal);
  await terminal.waitFor(/\[root [0-9a-f]{8}\]/);
  return terminal;
}

const lastUser = (text: string) => (req: RecordedRequest) =>
  req.lastMessage?.role === "user" && req.lastMessage.content === text;

/** Foreground/background color SGR codes (30-37, 90-97, 38;…, 40-47, 48;…). */
// eslint-disable-next-line no-control-regex
const COLOR_SGR = /\x1b\[(?:[0-9;]*;)?(?:3[0-8]|9[0-7]|4[0-8])(?:;[0-9;]*)?m/;

// A real terminal on a shared 2-core machine: one retry absorbs a timing hiccup (a persistent
// failure still fails); each retry shows in the run's output.
describe("the TUI's input in a terminal", { retry: 1 }, () => {
  it("edits: Home, Ctrl+J and Shift+Enter newlines, Alt+Left word motion; Enter sends; Up recalls", async () => {
    model().script([
      { match: lastUser("one\ntwo"), reply: { text: "got one and two" } },
      { match: lastUser("hello world\nsecond Xline"), reply: { text: "got two lines" } },
      { match: lastUser("hello world\nsecond Xline!"), reply: { text: "got it again" } },
    ]);
    const t = await open();
    await t.type("one");
    await t.keys("S-Enter");
    await t.type("two");
    await t.waitFor(/❯ one\n\s+two/);
    await t.keys("Enter");
    await t.waitFor("● got one and two");
    await t.type("world");
    await t.keys("Home");
    await t.type("hello ");
    await t.keys("End", "C-j");
    await t.type("second line");
    await t.keys("M-Left");
    await t.type("X");
    const editing = await t.waitFor("  second Xline");
    expect(editing).toContain("❯ hello world");
    await t.keys("Enter");
    await t.waitFor("● got two lines");
    // Up on the first row recalls the last message; edit it and send again.
    await t.keys("Up");
    await t.waitFor((s) => /\n❯ hello world\n\s+second Xline/.test(s.split("[root")[1] ?? ""));
    await t.keys("End");
    await t.type("!");
    await t.keys("Enter");
    await t.waitFor("● got it again");
    model().assertAllUsed();
  });

  it("pastes with newlines without submitting; a large paste is collapsed and sent whole", async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `pasted line ${i + 1}`);
    model().script([
      { match: lastUser("a\nb"), reply: { text: "small paste arrived" } },
      { match: lastUser(`see this: ${lines.join("\n")}`), reply: { text: "large paste arrived" } },
    ]);
    const t = await open();
    const before = model().requests.length;
    await t.raw("\x1b[200~a\rb\x1b[201~");
    await t.waitFor(/❯ a\n\s+b/);
    expect(model().requests.length).toBe(before);
    await t.keys("Enter");
    await t.waitFor("● small paste arrived");
    await t.type("see this: ");
    await t.raw(`\x1b[200~${lines.join("\r")}\x1b[201~`);
    const collapsed = await t.waitFor("[pasted 30 lines]");
    expect(collapsed).not.toContain("pasted line 2\n");
    expect(model().requests.length).toBe(before + 1);
    await t.keys("Enter");
    await t.waitFor("● large paste arrived");
    model().assertAllUsed();
  });

  it("/wait makes the agent wait as its own tool: status layer, recorded result", async () => {
    model().script({ agent: "sleeper", reply: { text: "nap taken", delayMs: 3000 } });
    const t = await open();
    await t.type('/fork --name sleeper "take a nap"');
    await t.keys("Enter");
    await t.waitFor(/\[sleeper [0-9a-f]{8}\]/);
    await t.keys("C-Up");
    await t.waitFor(/\[root [0-9a-f]{8}\]/);
    await t.type("/wait 30 sleeper");
    await t.keys("Enter");
    // While the child works: the status layer and the spinner; then the recorded result.
    const waiting = await t.waitFor(/◐ running\s+sleeper/);
    expect(waiting).toContain("» /wait 30 sleeper");
    expect(waiting).toMatch(/waiting for 1 agent/);
    // Its result beneath its call: one row per awaited agent.
    await t.waitFor(/→ wait\([^\n]*\)\n {2}← 1 agent\n {4}○ sleeper [0-9a-f]{8} idle/);
    // The status layer goes with the wait.
    await t.waitForGone(/◐ running\s+sleeper/);
    model().assertAllUsed();
  });

  it("/model completes from the server's list with Tab and sets the model; Ctrl+O; /exit", async () => {
    model().quirks({ models: ["fake-model", "fake-large-2", "other"] });
    const t = await open();
    await t.type("/model fake-l");
    await t.keys("Tab");
    await t.waitFor("❯ /model fake-large-2");
    await t.keys("Enter");
    await t.waitFor("model of this agent set to fake-large-2");
    await t.waitFor(/│ fake-large-2 │/);
    // Ctrl+O lets the terminal select text (mouse capture off), shown in the status bar.
    await t.keys("C-o");
    await t.waitFor("mouse off");
    await t.type("/exit");
    await t.keys("Enter");
    await t.waitFor("[warren exited 0]");
    expect(t.stderr()).toBe("");
  });

  it("pages older history in from the database as you scroll up", async () => {
    const t = await open();
    const root = /\[root ([0-9a-f]{8})\]/.exec(await t.screen())![1]!;
    const { db } = database();
    await db.execute(sql`
      insert into events (agent_id, kind, content)
      select a.id, 'system', 'history entry ' || n
        from agents a, generate_series(1, 450) as n
       where a.id::text like ${root + "%"} and a.parent_id is null
       order by n`);
    await t.kill();
    const again = await startTerminal({
      env: warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL }),
      args: ["--tree", root],
    });
    terminals.push(again);
    await again.waitFor("history entry 450");
    let screen = "";
    for (let i = 0; i < 80 && !/history entry 1\n/.test(screen); i++) {
      await again.keys("PPage");
      screen = await again.screen();
    }
    expect(screen).toMatch(/history entry 1\n/);
    expect(screen).not.toContain("history entry 450");
  });

  it("reflows on resize and says when the terminal is too small", async () => {
    const long = Array.from({ length: 30 }, (_, i) => `w${i}`).join(" ");
    model().script({ match: lastUser("reflow me"), reply: { text: long } });
    const t = await open();
    await t.type("reflow me");
    await t.keys("Enter");
    const wide = await t.waitFor(`● ${long}`);
    expect(wide).toContain(long); // one row at 120 columns
    await t.resize(30, 8);
    await t.waitFor("terminal too small: need 40×10");
    await t.resize(50, 20);
    const narrow = await t.waitFor(/\[root [0-9a-f]{8}\]/);
    expect(narrow).not.toContain("too small");
    expect(narrow).toContain("● w0 w1 w2");
    expect(narrow).not.toContain(long);
    for (const row of narrow.split("\n")) expect([...row].length).toBeLessThanOrEqual(50);
  });

  it("uses colors on a terminal and none with NO_COLOR", async () => {
    const plain = await open();
    await plain.type("/help");
    await plain.keys("Enter");
    await plain.waitFor("/capture");
    expect(await plain.styledScreen()).not.toMatch(COLOR_SGR);
    const colored = await open({ color: true });
    await colored.type("/kil");
    await colored.keys("Enter");
    await colored.waitFor("did you mean /kill?");
    expect(await colored.styledScreen()).toMatch(COLOR_SGR);
  });
});
