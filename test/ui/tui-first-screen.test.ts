// The first screen of a new tree in a real terminal (tmux): it names the model and its server, the
// working directory and the tree, and says how to begin; the first message replaces it.
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { warrenEnv } from "../support/warren.js";
import { startTerminal } from "./tmux.js";
import { useTuiSuite } from "./tui-suite.js";

const { database, model, terminals } = useTuiSuite();

// A real terminal on a shared 2-core machine: one retry absorbs a timing hiccup.
describe("the first screen in a terminal", { retry: 1 }, () => {
  it("names model, server, directory and tree with three hints, and goes with the first message", async () => {
    const cwd = mkdtempSync(path.join(os.tmpdir(), "warren-first-"));
    const env = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
    const t = await startTerminal({ env, args: ["--new"], cwd, width: 100, height: 30 });
    terminals.push(t);
    const first = await t.waitFor("/capture then /fork");
    const host = new URL(model().baseURL).host;
    expect(first).toContain(`model      fake-model on ${host}`);
    expect(first).toContain(`directory  ${cwd}`);
    expect(first).toMatch(/tree {7}root [0-9a-f]{8} in tree [0-9a-f]{8} · 1 agent/);
    expect(first).toContain("Enter sends what you type");
    expect(first).toContain("Ctrl+T the agents of the tree · /help keys and commands");

    model().script({ reply: { text: "hello from the model" } });
    await t.type("hello");
    await t.keys("Enter");
    const after = await t.waitFor("● hello from the model");
    expect(after).toContain("❯ hello");
    expect(after).not.toContain("/capture then /fork");
    expect(after).not.toContain("directory");
  });

  it("says bash runs unconfined when bubblewrap is missing, once the screen is up", async () => {
    // The checks (a spawned probe, a fetch) run after the first frame and the history.
    const env = warrenEnv({
      databaseUrl: database().url,
      modelUrl: model().baseURL,
      extra: { WARREN_BWRAP: "/nonexistent/bwrap" },
    });
    const t = await startTerminal({ env, args: ["--new"], width: 100, height: 30 });
    terminals.push(t);
    const screen = await t.waitFor("sandbox unavailable (/nonexistent/bwrap not found)");
    expect(screen).toContain("bash runs unconfined; install bubblewrap");
    expect(screen).toContain("❯");
  });
});
