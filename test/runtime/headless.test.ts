// `warren -p` basics and profiles: a profile gives a forked child its system prompt and tool list.
import { describe, expect, it } from "vitest";
import { lastToolResults, requestsOf, useE2E } from "./e2e-support.js";

const e2e = useE2E();

describe("warren -p", () => {
  it("prints the root's answer", async () => {
    e2e.fake().script({ agent: "root", reply: { text: "hello from the model" } });
    const run = await e2e.prompt("say hello", { json: false });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe("hello from the model");
  });

  it("forks a child with a profile's system prompt and tools; an unknown profile is INVALID_ARGS", async () => {
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "reader", prompt: "read", profile: "readonly" } },
            { name: "fork", arguments: { name: "other", prompt: "x", profile: "nope" } },
            { name: "wait", arguments: { timeout: 30, from_agents: ["reader"] } },
          ],
        },
      },
      {
        agent: "reader",
        reply: { toolCalls: [{ name: "send", arguments: { to: "parent", message: "read it" } }] },
      },
      { agent: "reader", reply: { text: "done" } },
      { agent: "root", reply: { text: "all done" } },
    ]);
    const run = await e2e.prompt("go", {
      config: {
        profiles: {
          readonly: { system_prompt: "You only read files.", tools: ["read_file", "send"] },
        },
      },
    });
    expect(run.code).toBe(0);
    const child = requestsOf(fake, "reader")[0]!;
    expect(child.systemPrompt).toMatch(/^You only read files\./);
    // send and wait are always offered to a child, so it can report (SPEC §3).
    expect(child.tools).toEqual(["read_file", "send", "wait"]);
    const results = lastToolResults(requestsOf(fake, "root").at(-1)!);
    expect(results.map((r) => r.value)).toEqual([
      { agent_id: expect.any(String), name: "reader" },
      {
        error: { code: "INVALID_ARGS", message: expect.stringContaining('unknown profile "nope"') },
      },
      {
        results: [
          expect.objectContaining({ name: "reader", status: "received", message: "read it" }),
        ],
      },
    ]);
  });
});
