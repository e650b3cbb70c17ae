// The TUI application on blessed's screen buffer (a fake terminal, no tmux): keys in, frames out.
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { createBus, type Bus } from "../../src/bus/bus.js";
import { loadConfig } from "../../src/config/config.js";
import { startTui, type Tui } from "../../src/ui/app.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();
let bus: Bus;

beforeAll(async () => {
  bus = await createBus(database().url);
});
afterAll(async () => {
  await bus.close();
});

async function openTui() {
  const { db } = database();
  const root = await createTree(db, { name: "main" });
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
