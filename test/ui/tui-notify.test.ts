// The TUI in a real terminal (tmux): the terminal's title carries the tree's counts, and a child
// that finishes while the person looks elsewhere rings the bell (tmux marks the window); with
// `notify: false` in the config neither happens.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { warrenEnv } from "../support/warren.js";
import { startTerminal } from "./tmux.js";
import { useTuiSuite } from "./tui-suite.js";

const { database, model, terminals } = useTuiSuite();

async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function script(): void {
  model().script([
    {
      agent: "root",
      reply: {
        toolCalls: [{ name: "fork", arguments: { name: "quick", prompt: "go", context: "fresh" } }],
      },
    },
    { agent: "quick", reply: { text: "quick is done", delayMs: 300 } },
    { agent: "root", reply: { text: "forked it" } },
  ]);
}

describe("notifications", { retry: 1 }, () => {
  it("the title counts what needs the person; a finished child rings the bell", async () => {
    script();
    const env = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
    const t = await startTerminal({ env, args: ["--new"], height: 30 });
    terminals.push(t);
    await t.waitFor(/\[root [0-9a-f]{8}\]/);
    await until("the title", async () => (await t.title()).startsWith("warren · "));
    await t.type("fork one");
    await t.keys("Enter");
    await t.waitFor("forked it");
    await until("the title to say the child needs you", async () =>
      (await t.title()).includes("1 needs you"),
    );
    expect(await t.bells()).toBeGreaterThan(0);
  });

  it("stays quiet with notify: false", async () => {
    script();
    const env = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
    mkdirSync(path.join(env.XDG_CONFIG_HOME!, "warren"), { recursive: true });
    writeFileSync(
      path.join(env.XDG_CONFIG_HOME!, "warren", "config.json"),
      JSON.stringify({ notify: false }),
    );
    const t = await startTerminal({ env, args: ["--new"], height: 30 });
    terminals.push(t);
    await t.waitFor(/\[root [0-9a-f]{8}\]/);
    await t.type("fork one");
    await t.keys("Enter");
    await t.waitFor("forked it");
    await t.waitFor(/○2/); // both idle: the child has finished
    expect(await t.title()).not.toContain("warren ·");
    expect(await t.bells()).toBe(0);
  });
});
