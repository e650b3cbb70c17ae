// Approvals in real terminals (tmux): a request asked by an agent that a `warren worker` process
// runs reaches a TUI opened later, which answers it with `y`; two TUIs on one tree both show a
// request, one denies it with a reason, the other's prompt goes, and the model reads the reason.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel, type RecordedRequest } from "../support/fake-model.js";
import { runWarren, startWarren, warrenEnv } from "../support/warren.js";
import { after } from "../runtime/e2e-support.js";
import { killAllTerminals, startTerminal, type Terminal } from "./tmux.js";

const database = useTestDatabase();
let model: FakeModel;
const terminals: Terminal[] = [];
const stops: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  model = await startFakeModel();
});
afterEach(async () => {
  await Promise.all(terminals.splice(0).map((t) => t.kill()));
  await Promise.all(stops.splice(0).map((stop) => stop()));
});
afterAll(async () => {
  await killAllTerminals();
  await model.close();
});

const toolResult = (req: RecordedRequest) =>
  req.messages.find((m) => m.role === "tool")?.content ?? "";

function askEnv() {
  return warrenEnv({
    databaseUrl: database().url,
    modelUrl: model.baseURL,
    extra: { WARREN_APPROVE: "ask" },
  });
}

async function open(env: NodeJS.ProcessEnv, args: string[] = []): Promise<Terminal> {
  const t = await startTerminal({ env, args, width: 110, height: 30 });
  terminals.push(t);
  await t.waitFor(/\[root [0-9a-f]{8}\]/);
  return t;
}

describe("approvals in the TUI", { retry: 1 }, () => {
  it("a request of an agent in a `warren worker` process, answered with y in a TUI opened later", async () => {
    model.script([
      {
        agent: "root",
        match: (req) => req.lastMessage?.role === "user",
        reply: { toolCalls: [{ name: "bash", arguments: { command: "echo worker-42" } }] },
      },
      { agent: "root", match: after("bash"), reply: { text: "the command said it" } },
    ]);
    const env = askEnv();
    // The tree exists (its root idle); then only a worker process runs agents.
    const first = await open(env, ["--new"]);
    await first.type("/exit");
    await first.keys("Enter");
    await first.waitFor("[warren exited 0]");
    const worker = startWarren(["worker"], env);
    stops.push(async () => {
      worker.child.kill("SIGINT");
      await worker.done;
    });
    expect((await runWarren(["send", "root", "run it"], env)).code).toBe(0);
    const listed = await until(async () => {
      const rows = JSON.parse(
        (await runWarren(["approvals", "--all", "--json"], env)).stdout || "[]",
      ) as { id: number }[];
      return rows[0];
    });

    const t = await open(env);
    const shown = await t.waitFor(`? approval ${listed.id} — bash
    command: echo worker-42`);
    expect(shown).toContain(`y allow once · a allow "echo worker-42 *" for the tree · n deny`);
    expect(shown).toMatch(/\? 1 approval \^G/);
    await t.type("y");
    await t.waitFor("● the command said it");
    await t.waitForGone(`? approval ${listed.id} —`);
    const screen = await t.screen();
    expect(screen).toContain(`approval ${listed.id} allowed once by person (tui)`);
    expect(screen).not.toMatch(/\? 1 approval/);
    expect(toolResult(model.requests.at(-1)!)).toContain("worker-42");
    expect(t.stderr()).toBe("");
  });

  it("two TUIs on one tree: both show the request, one denies with a reason, the other's prompt goes", async () => {
    model.script([
      {
        agent: "root",
        match: (req) => req.lastMessage?.role === "user",
        reply: { toolCalls: [{ name: "bash", arguments: { command: "rm -rf build" } }] },
      },
      { agent: "root", match: after("bash"), reply: { text: "understood, not removing" } },
    ]);
    const env = askEnv();
    const a = await open(env, ["--new"]);
    const b = await open(env);
    await a.type("clean up");
    await a.keys("Enter");
    const request = /\? approval (\d+) — bash\n {4}command: rm -rf build/;
    const onA = await a.waitFor(request);
    const id = request.exec(onA)![1]!;
    await b.waitFor(`? approval ${id} — bash\n    command: rm -rf build`);

    await b.type("n");
    await b.waitFor(`deny ${id} reason ›`);
    await b.type("keep the build, it is cached");
    await b.keys("Enter");
    await a.waitForGone(`? approval ${id} —`);
    await b.waitForGone(`? approval ${id} —`);
    await a.waitFor("● understood, not removing");
    expect(await a.screen()).toContain(
      `approval ${id} denied by person (tui): bash: rm -rf build — keep the build, it is cached`,
    );

    const listed = await runWarren(["approvals", "--all", "--json"], env);
    expect(JSON.parse(listed.stdout)).toEqual([]);
    const result = toolResult(model.requests.at(-1)!);
    expect(result).toContain("NOT_ALLOWED");
    expect(result).toContain("keep the build, it is cached");
    // A late answer in the first TUI says who was first.
    await a.type(`/approve ${id}`);
    await a.keys("Enter");
    await a.waitFor(`approval ${id} was already denied by person (tui)`);
  });

  it("a real newline in a command is a row break with ⏎, a typed \\n stays on its row (issue 38)", async () => {
    const command = 'ls -la "$(pwd)"  # list files\ntouch X; echo a\\nb';
    model.script([
      {
        agent: "root",
        match: (req) => req.lastMessage?.role === "user",
        reply: { toolCalls: [{ name: "bash", arguments: { command } }] },
      },
      { agent: "root", match: after("bash"), reply: { text: "not run then" } },
    ]);
    const t = await open(askEnv(), ["--new"]);
    await t.type("list them");
    await t.keys("Enter");
    const request =
      /\? approval (\d+) — bash\n {4}command: ls -la "\$\(pwd\)" {2}# list files⏎\n {6}touch X; echo a\\nb\n/;
    const id = request.exec(await t.waitFor(request))![1]!;
    show("a command with a real newline", await t.screen());
    await t.type("n");
    await t.waitFor(`deny ${id} reason ›`);
    await t.keys("Enter");
    await t.waitFor("● not run then");
  });

  it("a child's request: counted on the root in the panel and status bar, Ctrl+G jumps to it, a allows its pattern", async () => {
    model.script([
      {
        agent: "tester",
        match: (req) => req.lastMessage?.role === "user",
        reply: { toolCalls: [{ name: "bash", arguments: { command: "npm test --silent" } }] },
      },
      { agent: "tester", match: after("bash"), reply: { text: "tests ran" } },
    ]);
    const t = await open(askEnv(), ["--new"]);
    await t.type('/fork --name tester "run the tests"');
    await t.keys("Enter");
    const request = /\? approval (\d+) — bash\n {4}command: npm test --silent/;
    const id = request.exec(await t.waitFor(request))![1]!;
    show("the asking agent's view", await t.screen());
    await t.keys("C-Up");
    const atRoot = await t.waitFor(/\[root [0-9a-f]{8}\][\s\S]*\? 1 approval \^G/);
    expect(atRoot).not.toMatch(request);
    await t.keys("C-t");
    const panel = await t.waitFor(/root [0-9a-f]{8} \?1/);
    expect(panel).toMatch(
      new RegExp(`tester [0-9a-f]{8} +\\? needs approval ${id}: bash: npm test`),
    );
    show("the root's view with the panel open", panel);
    await t.keys("Escape");
    await t.waitForGone("agents — ↑↓ select");
    await t.keys("C-g");
    await t.waitFor(request);
    await t.type("a");
    await t.waitFor(`approval ${id} allowed for this tree (npm test *) by person (tui)`);
    await t.waitForGone(/\? 1 approval/);
    expect(toolResult(model.requests.at(-1)!)).not.toContain("NOT_ALLOWED");
  });
});

/** With WARREN_TEST_SHOW=1, prints a screen (to paste a real one into a report). */
function show(what: string, screen: string): void {
  if (process.env.WARREN_TEST_SHOW) console.log(`--- ${what}\n${screen}`);
}

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("timed out");
}
