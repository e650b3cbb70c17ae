// End to end through `bin/warren -p`: the model server failing (once, persistently, hanging) and
// the shape of `--json` output, `--timeout` included.
import { describe, expect, it } from "vitest";
import { eventsOf, kindsOf, requestsOf, useE2E } from "./e2e-support.js";

const e2e = useE2E();

describe("model server failures", () => {
  it("retries a single 500 and succeeds", async () => {
    const fake = e2e.fake();
    fake.script([
      { agent: "root", reply: { status: 500, text: "overloaded" } },
      { agent: "root", reply: { text: "second time lucky" } },
    ]);
    const run = await e2e.prompt("hello", { json: false });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe("second time lucky");
    expect(fake.requests).toHaveLength(2);
  });

  it("fails with exit 1, one line on stderr and an error event when the 500s persist", async () => {
    const fake = e2e.fake();
    // One attempt and the SDK's two retries.
    fake.script({ agent: "root", times: 3, reply: { status: 500, text: "the GPUs are on fire" } });
    const run = await e2e.prompt("hello", { json: false });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^warren: .*500.*the GPUs are on fire/);
    expect(fake.requests).toHaveLength(3);

    // The tree is in the database: the root is idle with the error as its last event.
    const listed = await e2e.warren(["ls", "--json"]);
    const [root] = JSON.parse(listed.stdout) as { id: string; state: string }[];
    expect(root!.state).toBe("idle");
    const events = await eventsOf(e2e.db(), root!.id);
    expect(events.map((e) => e.kind)).toEqual(["user", "error"]);
    expect(events[1]!.content).toMatch(/500/);
  });

  it("reports the error in the --json object", async () => {
    const fake = e2e.fake();
    fake.script({ agent: "root", times: 3, reply: { status: 500, text: "still on fire" } });
    const run = await e2e.prompt("hello");
    expect(run.code).toBe(1);
    expect(run.json).toEqual({
      tree_id: expect.any(String),
      agent_id: run.json?.tree_id,
      text: "",
      tool_calls: 0,
      input_tokens: 0,
      output_tokens: 0,
      cached_tokens: 0,
      reasoning_tokens: 0,
      cost_usd: null,
      error: expect.stringMatching(/500.*still on fire/),
    });
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("gives up on a stream that stalls after its headers (WARREN_MODEL_TIMEOUT)", async () => {
    const fake = e2e.fake();
    fake.script({ agent: "root", reply: { hang: true } });
    const run = await e2e.prompt("hello", { json: false, env: { WARREN_MODEL_TIMEOUT: "1" } });
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^warren: model error: .*stalled: no data for 1000 ms/);
    expect(run.stderr).not.toMatch(/timed out after/); // the model timeout, not --timeout's
  });

  it("gives up on a server that never answers, after the SDK's retries", async () => {
    const fake = e2e.fake();
    fake.script({ agent: "root", times: 3, reply: { delayMs: 30_000, text: "too late" } });
    const run = await e2e.prompt("hello", { json: false, env: { WARREN_MODEL_TIMEOUT: "1" } });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^warren: .*did not answer within 1000 ms/),
    ]);
    expect(fake.requests).toHaveLength(3);
  });
});

describe("--json and --timeout", () => {
  it("prints one object with the root's text, tool calls and summed token usage", async () => {
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        reply: {
          toolCalls: [{ name: "wait", arguments: { timeout: 0 } }],
          usage: { input: 100, output: 7 },
        },
      },
      {
        agent: "root",
        reply: { text: "nothing in the mailbox", usage: { input: 130, output: 11 } },
      },
    ]);
    const run = await e2e.prompt("check the mail");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split("\n")).toHaveLength(1);
    expect(Object.keys(run.json!)).toEqual([
      "tree_id",
      "agent_id",
      "text",
      "tool_calls",
      "input_tokens",
      "output_tokens",
      "cached_tokens",
      "reasoning_tokens",
      "cost_usd",
    ]);
    expect(run.json).toEqual({
      tree_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      agent_id: run.json!.tree_id,
      text: "nothing in the mailbox",
      tool_calls: 1,
      input_tokens: 230,
      output_tokens: 18,
      cached_tokens: 0,
      reasoning_tokens: 0,
      cost_usd: null,
    });
    const [, second] = requestsOf(fake, "root");
    expect(second!.lastMessage).toMatchObject({ role: "tool", content: '{"status":"timeout"}' });
  });

  it("exits 124 when --timeout elapses, leaving the tree idle and marked interrupted", async () => {
    const fake = e2e.fake();
    fake.script({ agent: "root", reply: { hang: true } });
    const run = await e2e.prompt("hang", { timeout: 1 });
    expect(run.code).toBe(124);
    expect(run.stderr).toMatch(/timed out after/);
    expect(run.json).toMatchObject({ text: "", error: expect.stringMatching(/timed out/) });

    const listed = await e2e.warren(["ls", "--json", "--tree", run.json!.tree_id]);
    const [root] = JSON.parse(listed.stdout) as { id: string; state: string }[];
    expect(root!.state).toBe("idle");
    expect(await kindsOf(e2e.db(), root!.id)).toEqual(["user", "interrupted"]);
  });
});
