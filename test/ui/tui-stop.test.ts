// The TUI in a real terminal (tmux): /stop on the root interrupts the root and its running child,
// and Ctrl+X does the same for the viewed agent's subtree; every agent stays alive (idle).
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { agentNameOf } from "../support/fake-model.js";
import { warrenEnv } from "../support/warren.js";
import { startTerminal, type Terminal } from "./tmux.js";
import { useTuiSuite } from "./tui-suite.js";

const { database, model, terminals } = useTuiSuite();

async function open() {
  const env = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
  const terminal = await startTerminal({ env, args: ["--new"] });
  terminals.push(terminal);
  await terminal.waitFor(/\[root [0-9a-f]{8}\]/);
  return terminal;
}

async function enter(t: Terminal, text: string) {
  await t.type(text);
  await t.keys("Enter");
}

async function until(what: string, probe: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const calls = (name: string) => model().requests.filter((r) => agentNameOf(r) === name).length;

async function states(): Promise<Record<string, string>> {
  const rows = await database().db.execute<{ name: string; state: string }>(
    sql`select name, state from agents`,
  );
  return Object.fromEntries(rows.rows.map((r) => [r.name, r.state]));
}

const forkAndHang = (message: string, child: string) => [
  {
    match: (req: Parameters<typeof agentNameOf>[0]) =>
      agentNameOf(req) === "root" && req.lastMessage?.content === message,
    reply: {
      toolCalls: [{ name: "fork", arguments: { name: child, prompt: "dig", context: "fresh" } }],
    },
  },
  { agent: "root", reply: { hang: true } },
  { agent: child, reply: { hang: true } },
];

describe("stopping a subtree in the TUI", { retry: 1 }, () => {
  it("/stop on the root stops a running child too; Ctrl+X does the same", async () => {
    model().script(forkAndHang("dig one", "digger"));
    const t = await open();
    await enter(t, "dig one");
    await until("the root and its child to be mid-call", () => calls("digger") >= 1);
    await until("the root to be mid-call again", () => calls("root") >= 2);
    expect(await states()).toEqual({ root: "running", digger: "running" });

    await enter(t, "/stop");
    await t.waitFor("stopped 2 agents");
    await until("both to go idle", async () => {
      const s = await states();
      return s.root === "idle" && s.digger === "idle";
    });

    // The key, on the same (alive) root: a new turn forks a second child, and both stop again.
    model().script(forkAndHang("dig two", "digger-2"));
    await enter(t, "dig two");
    await until("the second child to be mid-call", () => calls("digger-2") >= 1);
    await until("the root to be mid-call", () => calls("root") >= 4);
    await t.keys("C-x");
    await t.waitFor(/stopped 2 agents[\s\S]*stopped 2 agents/);
    await until("every agent to go idle", async () =>
      Object.values(await states()).every((s) => s === "idle"),
    );
    expect(Object.keys(await states()).sort()).toEqual(["digger", "digger-2", "root"]);
    model().assertAllUsed();
  });
});
