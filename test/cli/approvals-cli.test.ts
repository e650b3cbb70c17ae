// Approvals from the command line: `warren -p --approve ask` waits for a person, who answers
// from another terminal with `warren approvals` / `warren approve ID`; `-p` without a person
// (its default, `--approve none`) denies, and the model reads why.
import { describe, expect, it } from "vitest";
import { requestApproval } from "../../src/approvals/approvals.js";
import { createTree } from "../../src/agents/tree.js";
import { startWarren, warrenEnv } from "../support/warren.js";
import { after, useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function script(command: string): void {
  e2e.fake().script([
    { agent: "root", reply: { toolCalls: [{ name: "bash", arguments: { command } }] } },
    { agent: "root", match: after("bash"), reply: { text: "finished" } },
  ]);
}

describe("approvals on the command line", () => {
  it("-p --approve ask waits until `warren approve ID` from another terminal", async () => {
    script("echo approved-run");
    const env = warrenEnv({
      databaseUrl: e2e.db().$client.options.connectionString!,
      modelUrl: e2e.fake().baseURL,
      extra: { WARREN_APPROVE: "ask" },
    });
    const run = startWarren(["-p", "go", "--timeout", "60", "--json"], env);
    const listed = await until("a request to be listed", async () => {
      const r = await e2e.warren(["approvals", "--all", "--json"]);
      const rows = JSON.parse(r.stdout || "[]") as { id: number; tool: string; subject: string }[];
      return rows.length > 0 ? rows : undefined;
    });
    expect(listed[0]).toMatchObject({ tool: "bash", subject: "echo approved-run" });
    const text = await e2e.warren(["approvals", "--all"]);
    expect(text.stdout).toContain("      command: echo approved-run");

    const answer = await e2e.warren(["approve", String(listed[0]!.id)]);
    expect(answer.code).toBe(0);
    expect(answer.stdout).toContain(`allowed request ${listed[0]!.id}`);
    const again = await e2e.warren(["deny", String(listed[0]!.id)]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already allowed by person (cli)");

    const done = await run.done;
    expect(done.code).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ text: "finished" });
    const seen = e2e
      .fake()
      .requests.at(-1)!
      .messages.find((m) => m.role === "tool")!;
    expect(seen.content).toContain("approved-run");
  });

  it("-p answers no by default, and the model reads why", async () => {
    script("echo never");
    const run = await e2e.prompt("go", { env: { WARREN_APPROVE: "" } });
    expect(run.code).toBe(0);
    const seen = e2e
      .fake()
      .requests.at(-1)!
      .messages.find((m) => m.role === "tool")!;
    expect(seen.content).toContain("NOT_ALLOWED");
    expect(seen.content).toContain("--approve none");
  });

  it("warren approvals shows every argument, a real newline unlike a typed \\n, invisibles as codes", async () => {
    const db = e2e.db();
    const root = await createTree(db, {});
    const ask = (callKey: string, tool: string, args: Record<string, unknown>) =>
      requestApproval(db, {
        treeId: root.id,
        agentId: root.id,
        callKey,
        tool,
        subject: "README.md",
        arguments: JSON.stringify(args),
        pattern: "",
      });
    await ask("k1", "bash", { command: 'ls -la "$(pwd)"  # list files\ntouch X' });
    await ask("k2", "bash", { command: 'ls -la "$(pwd)"  # list files\\ntouch X' });
    await ask("k3", "mcp__tracker__ping", { path: "README.md", command: "rm -rf ~" });
    await ask("k4", "bash", { command: "r\u200bm -rf \u0440m \u202e\u{e0041}" });
    const shown = await e2e.warren(["approvals", "--tree", root.id]);
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split("\n");
    const at = (text: string) => lines.findIndex((line) => line.includes(text));
    // A real newline: the line ends with ⏎ and the next command is on a line of its own.
    const real = at("# list files⏎");
    expect(real).toBeGreaterThan(0);
    expect(lines[real + 1]).toBe("        touch X");
    // A typed backslash-n stays as typed, on one line.
    expect(lines[at("# list files\\n")]).toBe(
      '      command: ls -la "$(pwd)"  # list files\\ntouch X',
    );
    // An MCP call: both arguments, not only the subject the policy matched.
    expect(lines[at("mcp__tracker__ping") + 1]).toBe("      path: README.md");
    expect(lines[at("mcp__tracker__ping") + 2]).toBe("      command: rm -rf ~");
    expect(lines[at("r\\u200bm")]).toBe("      command: r\\u200bm -rf \\u0440m \\u202e\\u{e0041}");
    expect(shown.stdout).not.toMatch(/[\u200b\u202e\u0440]|\u{e0041}/u);
    // --json stays raw data: the arguments exactly as the call gave them.
    const json = await e2e.warren(["approvals", "--tree", root.id, "--json"]);
    const rows = JSON.parse(json.stdout) as { arguments: string }[];
    expect(JSON.parse(rows[0]!.arguments)).toEqual({
      command: 'ls -la "$(pwd)"  # list files\ntouch X',
    });
    expect(JSON.parse(rows[3]!.arguments)).toEqual({
      command: "r\u200bm -rf \u0440m \u202e\u{e0041}",
    });
  });

  it("rejects a bad mode and a bad id with exit 2", async () => {
    expect((await e2e.warren(["-p", "x", "--approve", "maybe"])).code).toBe(2);
    expect((await e2e.warren(["approve", "abc"])).code).toBe(2);
  });
});
