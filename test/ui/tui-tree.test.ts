// The TUI in a real terminal (tmux), working a tree: capture → fork (the parent's model never sees
// the captured text), /cancel, Ctrl+arrow navigation, the agent panel, typing into a child, /kill
// moving the view to the parent, a dead agent still visitable, /reap, and the fan-in status layer.
import { describe, expect, it } from "vitest";
import { agentNameOf, type RecordedRequest } from "../support/fake-model.js";
import { warrenEnv } from "../support/warren.js";
import { startTerminal, type Terminal } from "./tmux.js";
import { useTuiSuite } from "./tui-suite.js";

const { database, model, terminals } = useTuiSuite();

async function open(args: string[] = ["--new"]) {
  const env = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
  const terminal = await startTerminal({ env, args });
  terminals.push(terminal);
  await terminal.waitFor(/\[root [0-9a-f]{8}\]/);
  return terminal;
}

async function enter(t: Terminal, text: string) {
  await t.type(text);
  await t.keys("Enter");
}

/** The separator row: `… [current id8] …`. */
const at = (name: string) => new RegExp(`\\[${name} [0-9a-f]{8}( ✗)?\\]`);

const lastUser = (text: string) => (req: RecordedRequest) =>
  req.lastMessage?.role === "user" && req.lastMessage.content === text;

const mentions = (req: RecordedRequest, text: string) =>
  req.messages.some((m) => typeof m.content === "string" && m.content.includes(text));

// A real terminal on a shared 2-core machine: one retry absorbs a timing hiccup (a persistent
// failure still fails); each retry shows in the run's output.
describe("the TUI working a tree", { retry: 1 }, () => {
  it("captures a task and forks a child that runs it; the parent's model never sees it", async () => {
    model().script([
      { match: lastUser("hi root"), reply: { text: "hello person" } },
      { agent: "worker", reply: { text: "worker finished the captured task" } },
      { match: lastUser("after the fork"), reply: { text: "root again" } },
    ]);
    const t = await open();
    await enter(t, "hi root");
    await t.waitFor("● hello person");
    await enter(t, "/capture");
    await t.waitFor("✎ capture ›");
    await enter(t, "Task line one");
    await enter(t, "Task line two");
    const captured = await t.waitFor("│ Task line two");
    expect(captured).toContain("captured — no model sees this");
    await enter(t, "/fork --name worker");
    const child = await t.waitFor("● worker finished the captured task");
    expect(child).toMatch(at("worker"));
    expect(child).toContain("❯ Task line one");
    // Back to the parent: its next turn's request holds its own chat but not the captured text.
    await t.keys("C-Up");
    await t.waitFor(at("root"));
    await enter(t, "after the fork");
    await t.waitFor("● root again");
    const rootRequests = model().requests.filter((r) => agentNameOf(r) === "root");
    expect(rootRequests.length).toBe(2);
    for (const request of rootRequests) expect(mentions(request, "Task line")).toBe(false);
    const workerRequest = model().requests.find((r) => agentNameOf(r) === "worker")!;
    // Its first message is the captured text (framed as its task after the inherited context).
    expect(workerRequest.lastMessage?.content).toMatch(/(^|\n)Task line one\nTask line two$/);
    expect(mentions(workerRequest, "hi root")).toBe(true); // it inherited the parent's context
    model().assertAllUsed();
  });

  it("keeps every captured line typed quickly before /fork, in order", async () => {
    model().script({ agent: "quick", reply: { text: "quick child done" } });
    const t = await open();
    await enter(t, "/capture");
    await t.waitFor("✎ capture ›");
    // All in one burst, as a terminal delivers fast typing or typed-ahead keys: every Enter is
    // handled in the same tick, so the lines' saves are still running when /fork reads them.
    await t.raw("Quick line one\rQuick line two\rQuick line three\r/fork --name quick\r");
    await t.waitFor("● quick child done");
    const request = model().requests.find((r) => agentNameOf(r) === "quick")!;
    expect(request.lastMessage?.content).toMatch(
      /(^|\n)Quick line one\nQuick line two\nQuick line three$/,
    );
    model().assertAllUsed();
  });

  it("/cancel ends capture without forking; the captured text stays visible and unsent", async () => {
    model().script({ match: lastUser("a normal message"), reply: { text: "normal answer" } });
    const t = await open();
    await enter(t, "/capture");
    await enter(t, "never to be sent");
    await enter(t, "/cancel");
    await t.waitFor("capture cancelled");
    await enter(t, "a normal message");
    const screen = await t.waitFor("● normal answer");
    expect(screen).toContain("│ never to be sent");
    expect(screen).not.toContain("✎ capture ›");
    expect(model().requests.some((r) => mentions(r, "never to be sent"))).toBe(false);
  });

  it("navigates with Ctrl+arrows and the panel, talks to a child, kills, visits the dead, reaps", async () => {
    model().script([
      {
        agent: "beta",
        match: (r) => r.messages.length <= 3 || !mentions(r, "status report"),
        reply: { text: "beta here, hello" },
      },
      {
        agent: "beta",
        match: (r) => mentions(r, "status report"),
        reply: { text: "beta got the mail" },
      },
    ]);
    const t = await open();
    await enter(t, "/fork --name alpha");
    await t.waitFor(at("alpha"));
    await t.keys("C-Up");
    await t.waitFor(at("root"));
    await enter(t, "/fork --name beta");
    await t.waitFor(at("beta"));
    // Siblings wrap both ways; Ctrl+Down goes to the newest child.
    await t.keys("C-Left");
    await t.waitFor(at("alpha"));
    await t.keys("C-Left");
    await t.waitFor(at("beta"));
    await t.keys("C-Right");
    await t.waitFor(at("alpha"));
    await t.keys("C-Up");
    await t.waitFor(at("root"));
    await t.keys("C-Down");
    await t.waitFor(at("beta"));

    // Typing into a child is a message to that child.
    await enter(t, "hello beta");
    await t.waitFor("● beta here, hello");
    expect(model().requests.find((r) => agentNameOf(r) === "beta")?.lastMessage?.content).toMatch(
      /(^|\n)hello beta$/,
    );

    // The panel lists every agent; Enter jumps to the selected one.
    await t.keys("C-t");
    const panel = await t.waitFor("agents — ");
    expect(panel).toMatch(/root [0-9a-f]{8}/);
    expect(panel).toMatch(/alpha [0-9a-f]{8}/);
    await t.keys("Up");
    await t.keys("Enter");
    await t.waitFor(at("alpha"));
    await t.waitForGone("agents — ");

    // /kill of the current agent moves the view to its parent.
    await enter(t, "/kill");
    await t.waitFor((s) => at("root").test(s) && /killed alpha [0-9a-f]{8}/.test(s));
    // The dead agent is still visitable: frozen scrollback with the kill event, no input.
    await t.keys("C-Down");
    await t.waitFor(at("beta"));
    await t.keys("C-Left");
    const dead = await t.waitFor(at("alpha"));
    expect(dead).toContain("killed by the person");
    expect(dead).toContain("dead agent: no input");
    // The command's answer is recorded below it: seen here, where /kill was typed, after the move.
    expect(dead).toMatch(/» \/kill\n(.*\n)*· killed alpha [0-9a-f]{8}/);
    await enter(t, "some text");
    await t.waitFor(/alpha [0-9a-f]{8} is dead: it takes no input/);
    await enter(t, "/agents");
    await t.waitFor(/alpha [0-9a-f]{8}\s+dead/);
    // /reap removes it from navigation and moves the view to the nearest living ancestor.
    await enter(t, "/reap");
    // The root's history paints as soon as it is read, maybe a frame before the answer.
    await t.waitFor((s) => at("root").test(s) && s.includes("reaped 1 dead agent"));
    await t.keys("C-t");
    const after = await t.waitFor("agents — ");
    expect(after).not.toMatch(/alpha [0-9a-f]{8}/);
    expect(after).toMatch(/beta [0-9a-f]{8}/);
    await t.keys("Escape");
    await t.waitForGone("agents — ");

    // /send mails from the current agent (the root); beta wakes up with it.
    await enter(t, '/send beta "status report, please"');
    await t.waitFor(/mail sent to beta [0-9a-f]{8}/);
    await t.keys("C-Down");
    await t.waitFor("● beta got the mail");
    // Back on the root, the answer is still below the command (it was a passing notice).
    await t.keys("C-Up");
    const back = await t.waitFor(at("root"));
    expect(back).toMatch(/mail sent to beta [0-9a-f]{8}/);
    const mailed = model().requests.find(
      (r) => agentNameOf(r) === "beta" && mentions(r, "status report"),
    );
    expect(mailed?.lastMessage?.content).toMatch(/root/); // the mail names its sender
  });

  it("shows the fan-in status layer changing as children finish", async () => {
    const isRoot = (req: RecordedRequest) => agentNameOf(req) === "root";
    const lastTool = (req: RecordedRequest) =>
      req.lastMessage?.role === "tool" ? String(req.lastMessage.content ?? "") : "";
    model().script([
      {
        match: (r) => isRoot(r) && lastUser("fan out")(r),
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "quick", prompt: "the quick task" } },
            { name: "fork", arguments: { name: "slow", prompt: "the slow task" } },
          ],
        },
      },
      {
        match: (r) => isRoot(r) && lastTool(r).includes("agent_id"),
        reply: {
          toolCalls: [{ name: "wait", arguments: { timeout: 60, from_agents: ["quick", "slow"] } }],
        },
      },
      {
        match: (r) => isRoot(r) && lastTool(r).includes("results"),
        reply: { text: "both children reported" },
      },
      {
        agent: "quick",
        match: (r) => r.lastMessage?.role === "user",
        reply: {
          delayMs: 300,
          toolCalls: [{ name: "send", arguments: { to: "parent", message: "quick result" } }],
        },
      },
      { agent: "quick", match: (r) => r.lastMessage?.role === "tool", reply: { text: "sent" } },
      {
        agent: "slow",
        match: (r) => r.lastMessage?.role === "user",
        reply: {
          delayMs: 3500,
          toolCalls: [{ name: "send", arguments: { to: "parent", message: "slow result" } }],
        },
      },
      { agent: "slow", match: (r) => r.lastMessage?.role === "tool", reply: { text: "sent" } },
    ]);
    const t = await open();
    await enter(t, "fan out");
    // One line per awaited child: the quick one has reported while the slow one still runs.
    const partial = await t.waitFor(
      (s) => /✓ received\s+quick/.test(s) && /◐ running\s+slow/.test(s),
    );
    expect(partial).toContain("waiting for 2 agents");
    await t.waitFor("● both children reported", 20_000);
    await t.waitForGone(/◐ running\s+slow/);
    // Every agent settles idle (the children end their turns after sending).
    await t.waitFor(/◐0 ◌0 ○3 ✗0/);
    model().assertAllUsed();
  });
});
