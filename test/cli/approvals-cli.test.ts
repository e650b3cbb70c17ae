// Approvals from the command line: `warren -p --approve ask` waits for a person, who answers
// from another terminal with `warren approvals` / `warren approve ID`; `-p` without a person
// (its default, `--approve none`) denies, and the model reads why.
import { describe, expect, it } from "vitest";
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
    expect(text.stdout).toContain("bash: echo approved-run");

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

  it("rejects a bad mode and a bad id with exit 2", async () => {
    expect((await e2e.warren(["-p", "x", "--approve", "maybe"])).code).toBe(2);
    expect((await e2e.warren(["approve", "abc"])).code).toBe(2);
  });
});
