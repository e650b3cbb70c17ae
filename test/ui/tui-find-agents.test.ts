// The TUI in a real terminal (tmux): the agent panel filters as you type and Enter goes to the
// match; Ctrl+N goes to the next agent that finished while the person looked elsewhere, and says
// so when none is left.
import { describe, expect, it } from "vitest";
import { warrenEnv } from "../support/warren.js";
import { startTerminal } from "./tmux.js";
import { useTuiSuite } from "./tui-suite.js";

const { database, model, terminals } = useTuiSuite();

const fork = (name: string) => ({
  name: "fork",
  arguments: { name, prompt: "go", context: "fresh" },
});

describe("finding agents in the TUI", { retry: 1 }, () => {
  it("filters the panel as you type; Ctrl+N visits the agents that finished", async () => {
    model().script([
      { agent: "root", reply: { toolCalls: [fork("alpha-finder"), fork("beta-digger")] } },
      { agent: "alpha-finder", reply: { text: "alpha is done" } },
      { agent: "beta-digger", reply: { text: "beta is done" } },
      // The first turn's end, then each child's final text (mailed to the root) read.
      { agent: "root", reply: { text: "asked both" }, times: Infinity },
    ]);
    const env = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
    const t = await startTerminal({ env, args: ["--new"], height: 30 });
    terminals.push(t);
    await t.waitFor(/\[root [0-9a-f]{8}\]/);
    await t.type("split it");
    await t.keys("Enter");
    await t.waitFor("asked both");
    // Both children have ended their turns (○ idle: 3 agents idle in the status bar).
    await t.waitFor(/○3/);

    await t.keys("C-t");
    await t.waitFor("type to filter");
    await t.type("alpha");
    const panel = await t.waitFor("filter: alpha");
    expect(panel).toContain("alpha-finder");
    expect(panel).not.toContain("beta-digger");
    await t.keys("Enter");
    await t.waitFor(/\[alpha-finder [0-9a-f]{8}\]/);

    // alpha-finder has been seen now: the next to have finished unseen is beta-digger.
    await t.keys("C-n");
    await t.waitFor(/\[beta-digger [0-9a-f]{8}\]/);
    await t.waitFor("beta-digger: finished");
    await t.keys("C-n");
    await t.waitFor("no agent needs you");
    model().assertAllUsed();
  });
});
