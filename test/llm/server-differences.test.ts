// The openai adapter against the ways OpenAI-compatible servers differ (SPEC §7), each reproduced
// by a switch of the fake model server: usage, reasoning, <think>, tool-call ids and indexes,
// finish_reason, rejected parameters, 429 with Retry-After.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOpenAIModel, type OpenAIModelOptions } from "../../src/llm/openai.js";
import { ModelError, type ModelRequest, type ToolSpec } from "../../src/llm/model.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { rejectionOf } from "../support/rejection.js";

let fake: FakeModel;

beforeEach(async () => {
  fake = await startFakeModel();
});

afterEach(async () => {
  await fake.close();
});

const modelFor = (options: OpenAIModelOptions = {}) =>
  createOpenAIModel({ baseURL: fake.baseURL, ...options });

const TOOLS: ToolSpec[] = [
  { name: "bash", description: "Run a command", parameters: { type: "object" } },
  { name: "read_file", description: "Read a file", parameters: { type: "object" } },
];

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: "fake-1",
    messages: [
      { role: "system", content: "You are helpful." },
      { role: "user", content: "hello there, how many files are in this directory?" },
    ],
    tools: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

describe("usage", () => {
  it("reads usage sent on the last chunk (with finish_reason) instead of a separate one", async () => {
    fake.script({
      reply: { text: "hi", usage: { input: 31, output: 4 }, usageMode: "last-chunk" },
    });
    const response = await modelFor().complete(request());
    expect(response.usage).toEqual({ inputTokens: 31, outputTokens: 4 });
  });

  it("reads cached and reasoning tokens when the server reports them", async () => {
    fake.script({
      reply: { text: "hi", usage: { input: 900, output: 50, cached: 768, reasoning: 30 } },
    });
    const response = await modelFor().complete(request());
    expect(response.usage).toEqual({
      inputTokens: 900,
      outputTokens: 50,
      cachedTokens: 768,
      reasoningTokens: 30,
    });
  });

  it("estimates usage, marked as estimated, when the server sends none", async () => {
    fake.script({ reply: { text: "There are twelve files here.", usageMode: "none" } });
    const response = await modelFor().complete(request());
    expect(response.usage.estimated).toBe(true);
    expect(response.usage.inputTokens).toBeGreaterThan(10);
    expect(response.usage.outputTokens).toBe(Math.ceil("There are twelve files here.".length / 4));
  });
});

describe("reasoning", () => {
  for (const field of ["reasoning_content", "reasoning"] as const) {
    it(`keeps \`${field}\` deltas apart from the answer and streams them to onReasoning`, async () => {
      fake.script({
        reply: { reasoning: "The user wants a count.", reasoningField: field, text: "12" },
      });
      const thoughts: string[] = [];
      const texts: string[] = [];
      const response = await modelFor().complete(
        request({ onReasoning: (d) => thoughts.push(d), onText: (d) => texts.push(d) }),
      );
      expect(response.text).toBe("12");
      expect(response.reasoning).toBe("The user wants a count.");
      expect(thoughts.join("")).toBe("The user wants a count.");
      expect(texts.join("")).toBe("12");
    });
  }

  it("splits <think>…</think> out of the content, even when the tags are cut between chunks", async () => {
    fake.script({
      reply: {
        text: "<think>\nCount them with ls.\n</think>\n\nThere are 12 files.",
        chunkSize: 3,
      },
    });
    const thoughts: string[] = [];
    const texts: string[] = [];
    const response = await modelFor().complete(
      request({ onReasoning: (d) => thoughts.push(d), onText: (d) => texts.push(d) }),
    );
    expect(response.text).toBe("There are 12 files.");
    expect(response.reasoning).toBe("\nCount them with ls.\n");
    expect(thoughts.join("")).toBe("\nCount them with ls.\n");
    expect(texts.join("")).not.toContain("think");
    expect(texts.join("")).not.toContain("Count them");
  });

  it("treats what precedes a lone </think> as reasoning (templates that open it in the prompt)", async () => {
    fake.script({ reply: { text: "Count them with ls.</think>There are 12 files." } });
    const response = await modelFor().complete(request());
    expect(response.text).toBe("There are 12 files.");
    expect(response.reasoning).toBe("Count them with ls.");
  });
});

describe("tool calls", () => {
  const twoCalls = [
    { name: "bash", arguments: { command: "ls" } },
    { name: "read_file", arguments: { path: "a.txt" } },
  ];

  it.each([
    ["missing", [null, null]],
    ["empty", ["", ""]],
    ["duplicate", ["call_0", "call_0"]],
  ] as const)("gives unique ids to calls whose ids are %s", async (_kind, ids) => {
    fake.script({ reply: { toolCalls: twoCalls.map((c, i) => ({ ...c, id: ids[i] })) } });
    const response = await modelFor().complete(request({ tools: TOOLS }));
    expect(response.toolCalls.map((c) => [c.name, c.arguments])).toEqual([
      ["bash", '{"command":"ls"}'],
      ["read_file", '{"path":"a.txt"}'],
    ]);
    const [first, second] = response.toolCalls.map((c) => c.id);
    expect(first).toMatch(/^call_\w+/);
    expect(second).toMatch(/^call_\w+/);
    expect(first).not.toBe(second);
  });

  it("assembles calls streamed without an index", async () => {
    fake.script({ reply: { toolCalls: twoCalls, toolCallsWithoutIndex: true } });
    const response = await modelFor().complete(request({ tools: TOOLS }));
    expect(response.toolCalls.map((c) => [c.name, c.arguments])).toEqual([
      ["bash", '{"command":"ls"}'],
      ["read_file", '{"path":"a.txt"}'],
    ]);
  });

  it.each([
    ["with", ["call_a", "call_b"]],
    ["without", [null, null]],
  ] as const)(
    "separates whole calls (%s ids) sent in one chunk under one index",
    async (_k, ids) => {
      const toolCalls = twoCalls.map((c, i) => ({ ...c, id: ids[i] }));
      fake.script({ reply: { toolCalls, toolCallsInOneChunk: true } });
      const response = await modelFor().complete(request({ tools: TOOLS }));
      expect(response.toolCalls.map((c) => [c.name, c.arguments])).toEqual([
        ["bash", '{"command":"ls"}'],
        ["read_file", '{"path":"a.txt"}'],
      ]);
    },
  );
});

describe("parameters a server rejects", () => {
  for (const param of ["stream_options", "parallel_tool_calls"]) {
    it(`retries once without ${param} after a 400, and never sends it to that server again`, async () => {
      fake.quirks({ rejectParams: [param] });
      fake.script({ reply: { text: "ok" }, times: 2 });
      const model = modelFor();

      expect((await model.complete(request({ tools: TOOLS }))).text).toBe("ok");
      expect((await model.complete(request({ tools: TOOLS }))).text).toBe("ok");

      expect(fake.requests.map((r) => param in r.body)).toEqual([true, false, false]);
      // The other optional parameter is still sent.
      const other = param === "stream_options" ? "parallel_tool_calls" : "stream_options";
      expect(fake.requests.every((r) => other in r.body)).toBe(true);
      fake.assertAllUsed();
    });
  }

  it("reports a 400 about something else at once, without retrying", async () => {
    fake.script({ reply: { status: 400, text: "messages: too many images" } });
    const error = await rejectionOf(modelFor().complete(request()));
    expect(error.message).toBe("model server answered 400: messages: too many images");
    expect(fake.requests).toHaveLength(1);
  });
});

describe("429 with Retry-After", () => {
  it("waits the seconds the server asks for, as many times as it asks", async () => {
    fake.script([
      { reply: { status: 429, text: "slow down", retryAfterSeconds: 1 } },
      { reply: { status: 429, text: "slow down", retryAfterSeconds: 0 }, times: 3 },
      { reply: { text: "ok" } },
    ]);
    const response = await modelFor().complete(request());
    expect(response.text).toBe("ok");
    expect(fake.requests).toHaveLength(5);
    // Obeyed: the second attempt came no sooner than the second the server asked for.
    expect(fake.requests[1]!.receivedAt - fake.requests[0]!.receivedAt).toBeGreaterThanOrEqual(950);
    fake.assertAllUsed();
  });

  it("fails at once, in one line, when the server asks for a wait longer than allowed", async () => {
    fake.script({ reply: { status: 429, text: "daily quota exceeded", retryAfterSeconds: 3600 } });
    const error = await rejectionOf(modelFor().complete(request()));
    expect(error).toBeInstanceOf(ModelError);
    expect(error.message).toBe(
      "model server answered 429: daily quota exceeded (the server asks to retry after 3600 s)",
    );
    expect(fake.requests).toHaveLength(1);
  });

  it("stops waiting at once when the call is aborted", async () => {
    fake.script({ reply: { status: 429, text: "slow down", retryAfterSeconds: 100 } });
    const controller = new AbortController();
    const pending = modelFor().complete(request({ signal: controller.signal }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    controller.abort();
    const error = await rejectionOf(pending);
    expect(error.name).toBe("AbortError");
    expect(fake.requests).toHaveLength(1);
  });
});
