// Small trees run through `bin/warren -p` against a fake server with another server's habits:
// reasoning kept but never sent back, tool calls with bad ids or finish_reason "stop", no usage,
// rejected parameters, and the `/models` check of WARREN_MODEL.
import { describe, expect, it } from "vitest";
import {
  after,
  agentNamed,
  eventsOf,
  isFirst,
  lastToolResults,
  requestsOf,
  useE2E,
} from "../runtime/e2e-support.js";

const e2e = useE2E();

/** A root that forks `child`, waits for it, and answers; the child sends "42" to its parent. */
function scriptTree(
  root: { first?: object; last?: object } = {},
  child: { first?: object } = {},
): void {
  e2e.fake().script([
    {
      agent: "root",
      match: isFirst,
      reply: {
        toolCalls: [
          {
            name: "fork",
            arguments: { name: "child", prompt: "Find the answer.", context: "fresh" },
          },
          { name: "wait", arguments: { timeout: 30, from_agents: ["child"] } },
        ],
        ...root.first,
      },
    },
    { agent: "root", match: after("wait"), reply: { text: "The answer is 42.", ...root.last } },
    {
      agent: "child",
      match: isFirst,
      reply: {
        toolCalls: [{ name: "send", arguments: { to: "parent", message: "42" } }],
        ...child.first,
      },
    },
    { agent: "child", match: after("send"), reply: { text: "Sent." } },
  ]);
}

describe("reasoning", () => {
  it("keeps reasoning_content and <think> in the events, shows neither as the answer, sends neither back", async () => {
    scriptTree(
      {
        first: { reasoning: "SECRET-ROOT-THOUGHT: delegate." },
        last: { text: "<think>SECRET-FINAL-THOUGHT</think>\n\nThe answer is 42." },
      },
      { first: { reasoning: "SECRET-CHILD-THOUGHT", reasoningField: "reasoning" } },
    );

    const run = await e2e.prompt("What is the answer?");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.json?.text).toBe("The answer is 42.");

    const db = e2e.db();
    const treeId = run.json!.tree_id;
    const assistant = async (name: string) =>
      (await eventsOf(db, (await agentNamed(db, treeId, name)).id)).filter(
        (e) => e.kind === "assistant",
      );
    const rootEvents = await assistant("root");
    expect(rootEvents.map((e) => e.data?.reasoning)).toEqual([
      "SECRET-ROOT-THOUGHT: delegate.",
      "SECRET-FINAL-THOUGHT",
    ]);
    expect(rootEvents.map((e) => e.content)).toEqual(["", "The answer is 42."]);
    expect((await assistant("child"))[0]!.data?.reasoning).toBe("SECRET-CHILD-THOUGHT");

    const sent = JSON.stringify(e2e.fake().requests.map((r) => r.messages));
    expect(sent).not.toContain("SECRET");
  });
});

describe("tool calls", () => {
  it("runs calls with duplicate ids, no index and finish_reason stop, each answered once", async () => {
    scriptTree({
      first: {
        toolCalls: [
          { id: "call_0", name: "fork", arguments: { name: "child", prompt: "Find the answer." } },
          { id: "call_0", name: "wait", arguments: { timeout: 30, from_agents: ["child"] } },
        ],
        toolCallsWithoutIndex: true,
        finishReason: "stop",
      },
    });

    const run = await e2e.prompt("What is the answer?");
    expect(run.stderr).toBe("");
    expect(run.json?.text).toBe("The answer is 42.");

    const [, afterWait] = requestsOf(e2e.fake(), "root");
    const results = lastToolResults(afterWait!);
    expect(results.map((r) => r.name)).toEqual(["fork", "wait"]);
    expect(new Set(results.map((r) => r.id)).size).toBe(2);
    expect(results[1]!.value).toMatchObject({ results: [{ name: "child", status: "received" }] });
  });

  it("runs whole calls sent in one chunk under one index", async () => {
    scriptTree({ first: { toolCallsInOneChunk: true } });

    const run = await e2e.prompt("What is the answer?");
    expect(run.stderr).toBe("");
    expect(run.json?.text).toBe("The answer is 42.");
  });
});

describe("usage and parameters", () => {
  it("counts estimated tokens when the server reports no usage", async () => {
    scriptTree(
      { first: { usageMode: "none" }, last: { usageMode: "none" } },
      { first: { usageMode: "none" } },
    );

    const run = await e2e.prompt("What is the answer?");
    expect(run.code).toBe(0);
    expect(run.json!.input_tokens).toBeGreaterThan(100);
    expect(run.json!.output_tokens).toBeGreaterThan(0);
  });

  it("works with a server that rejects stream_options and parallel_tool_calls", async () => {
    e2e.fake().quirks({ rejectParams: ["stream_options", "parallel_tool_calls"] });
    scriptTree();

    const run = await e2e.prompt("What is the answer?");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.json?.text).toBe("The answer is 42.");
  });
});

describe("the /models listing", () => {
  it("warns in one line when WARREN_MODEL is not listed, and still runs", async () => {
    e2e.fake().quirks({ models: ["qwen3:8b", "llama3.1:8b"] });
    e2e.fake().script({ agent: "root", reply: { text: "hi" } });

    const run = await e2e.prompt("hello");
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      `warren: model "fake-model" is not listed by ${e2e.fake().baseURL} (it lists: qwen3:8b, ` +
        "llama3.1:8b); check WARREN_MODEL if the first turn fails\n",
    );
  });

  it("says nothing when the model is listed", async () => {
    e2e.fake().quirks({ models: ["other", "fake-model"] });
    e2e.fake().script({ agent: "root", reply: { text: "hi" } });

    const run = await e2e.prompt("hello");
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
  });
});
