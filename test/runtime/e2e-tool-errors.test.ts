// End to end through `bin/warren -p`: bad input from the model (malformed JSON, unknown tools,
// wrong arguments, limits) comes back as `{"error":{code,message}}` results and the turn goes on.
import { describe, expect, it } from "vitest";
import type { ScriptedToolCall } from "../support/fake-model.js";
import {
  agentNamed,
  eventsOf,
  lastToolResults,
  mailOf,
  requestsOf,
  useE2E,
  after,
  isFirst,
} from "./e2e-support.js";

const e2e = useE2E();

/** Each bad call with the error code it must produce. */
const BAD_CALLS: [ScriptedToolCall, string][] = [
  [{ name: "fork", arguments: "{not json" }, "INVALID_ARGS"],
  [{ name: "frobnicate", arguments: {} }, "INVALID_ARGS"],
  [{ name: "send", arguments: { message: "to whom?" } }, "INVALID_ARGS"],
  [{ name: "send", arguments: { to: "victim", message: "hello?" } }, "AGENT_DEAD"],
  [{ name: "send", arguments: { to: "nobody", message: "hello?" } }, "UNKNOWN_AGENT"],
  [
    { name: "send", arguments: { to: "helper", message: "x".repeat(64 * 1024 + 1) } },
    "LIMIT_EXCEEDED",
  ],
  [{ name: "send", arguments: { to: "helper", message: 42 } }, "INVALID_ARGS"],
  [{ name: "fork", arguments: { name: "", prompt: "nameless" } }, "INVALID_ARGS"],
  [{ name: "fork", arguments: { name: "x", prompt: "p", budget: { turns: 0 } } }, "INVALID_ARGS"],
  [{ name: "kill", arguments: {} }, "INVALID_ARGS"],
  [{ name: "wait", arguments: { timeout: -1 } }, "INVALID_ARGS"],
  [{ name: "wait", arguments: { timeout: "5" } }, "INVALID_ARGS"],
  [{ name: "wait", arguments: { timeout: 0, from_agents: ["nobody"] } }, "UNKNOWN_AGENT"],
  [{ name: "wait", arguments: { timeout: 3601 } }, "LIMIT_EXCEEDED"],
];

describe("bad tool calls", () => {
  it("answers each with its error code, in call order, and the turn goes on", async () => {
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: ["victim", "helper"].map((name) => ({
            name: "fork",
            arguments: { name, prompt: "stand by", context: "fresh" },
          })),
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: {
          toolCalls: [
            { name: "wait", arguments: { timeout: 30, from_agents: ["victim", "helper"] } },
          ],
        },
      },
      {
        agent: "root",
        match: after("wait"),
        reply: { toolCalls: [{ name: "kill", arguments: { agent_id: "victim" } }] },
      },
      {
        agent: "root",
        match: after("kill"),
        reply: { toolCalls: BAD_CALLS.map(([call], i) => ({ ...call, id: `bad_${i}` })) },
      },
      { agent: "root", match: after("wait"), reply: { text: "survived" } },
      { agent: "victim", reply: { text: "standing by" } },
      { agent: "helper", reply: { text: "standing by" } },
    ]);

    const run = await e2e.prompt("misbehave", { timeout: 30 });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.json?.text).toBe("survived");

    const last = requestsOf(fake, "root").at(-1)!;
    // The malformed arguments went back to the model verbatim, the results in call order.
    const assistant = last.messages.findLast((m) => m.role === "assistant")!;
    expect(assistant.tool_calls![0]!.function.arguments).toBe("{not json");
    const results = lastToolResults(last);
    expect(results.map((r) => r.id)).toEqual(BAD_CALLS.map((_, i) => `bad_${i}`));
    results.forEach((result, i) => {
      expect(result.value, `${BAD_CALLS[i]![0].name} #${i}`).toEqual({
        error: { code: BAD_CALLS[i]![1], message: expect.any(String) },
      });
    });
    const message = (i: number) =>
      (results[i]!.value as { error: { message: string } }).error.message;
    expect(message(0)).toMatch(/not valid JSON/);
    expect(message(1)).toMatch(/unknown tool "frobnicate"/);
    expect(message(5)).toMatch(/limit/);

    const db = e2e.db();
    const treeId = run.json!.tree_id;
    const rootEvents = await eventsOf(db, treeId);
    const codes = rootEvents
      .filter((e) => e.kind === "tool_result" && String(e.data?.tool_call_id).startsWith("bad_"))
      .map((e) => [e.data?.tool_call_id, e.data?.code]);
    expect(new Map(codes as [string, string][])).toEqual(
      new Map(BAD_CALLS.map(([, code], i) => [`bad_${i}`, code])),
    );
    expect(rootEvents.some((e) => e.kind === "error")).toBe(false);
    // Nothing was half-done: no mail went out (but the children's final answers, their results)
    // and no child was forked by the bad calls.
    expect((await mailOf(db, treeId)).filter((m) => !m.final)).toEqual([]);
    expect((await agentNamed(db, treeId, "helper")).state).toBe("idle");
    expect((await agentNamed(db, treeId, "root")).tool_calls).toBe(4 + BAD_CALLS.length);
  });

  it("refuses a fork beyond the configured depth limit (LIMIT_EXCEEDED)", async () => {
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "A", prompt: "go deeper", context: "fresh" } },
          ],
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: { toolCalls: [{ name: "wait", arguments: { timeout: 30, from_agents: ["A"] } }] },
      },
      { agent: "root", match: after("wait"), reply: { text: "A finished" } },
      {
        agent: "A",
        match: isFirst,
        reply: { toolCalls: [{ name: "fork", arguments: { name: "B", prompt: "too deep" } }] },
      },
      { agent: "A", match: after("fork"), reply: { text: "could not fork" } },
    ]);

    const run = await e2e.prompt("nest", { timeout: 30, config: { limits: { maxDepth: 1 } } });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);

    const [refused] = lastToolResults(requestsOf(fake, "A")[1]!);
    expect(refused!.value).toEqual({
      error: { code: "LIMIT_EXCEEDED", message: expect.stringMatching(/depth limit/) },
    });
    const rootWait = lastToolResults(requestsOf(fake, "root")[2]!)[0]!.value;
    // A's final text is its result, mailed to the root.
    expect(rootWait).toMatchObject({
      results: [{ name: "A", status: "received", message: "could not fork", final: true }],
    });
    const db = e2e.db();
    const a = await agentNamed(db, run.json!.tree_id, "A");
    expect(a.depth).toBe(1);
    await expect(agentNamed(db, run.json!.tree_id, "B")).rejects.toThrow(/found 0/);
  });
});
