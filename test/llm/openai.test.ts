// The openai adapter against the fake model server, through the real SDK: streaming, tool-call
// assembly, usage, retries, timeouts, aborts and unreachable servers.
import { createServer, type AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOpenAIModel, type OpenAIModelOptions } from "../../src/llm/openai.js";
import { ModelError, type ModelRequest } from "../../src/llm/model.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { rejectionOf } from "../support/rejection.js";

let fake: FakeModel;

beforeEach(async () => {
  fake = await startFakeModel();
});

afterEach(async () => {
  await fake.close();
});

function modelFor(options: OpenAIModelOptions = {}) {
  return createOpenAIModel({ baseURL: fake.baseURL, ...options });
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: "fake-1",
    messages: [
      { role: "system", content: "You are helpful.\nYour name: root" },
      { role: "user", content: "hello" },
    ],
    tools: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** A port nothing listens on: bound, then released. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("openai adapter", () => {
  it("streams text, calling onText for each delta, and reads usage", async () => {
    fake.script({
      agent: "root",
      reply: { text: "Hello there, person!", usage: { input: 42, output: 7 } },
    });
    const deltas: string[] = [];

    const response = await modelFor().complete(request({ onText: (d) => deltas.push(d) }));

    expect(response.text).toBe("Hello there, person!");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("Hello there, person!");
    expect(response.toolCalls).toEqual([]);
    expect(response.usage).toEqual({ inputTokens: 42, outputTokens: 7 });
    expect(response.finishReason).toBe("stop");
    expect(fake.requests[0]?.body.tools).toBeUndefined();
    expect(fake.requests[0]?.body.stream_options).toEqual({ include_usage: true });
    fake.assertAllUsed();
  });

  it("assembles two tool calls from argument pieces, keeping malformed JSON verbatim", async () => {
    fake.script({
      reply: {
        text: "Let me look.",
        toolCalls: [
          { name: "bash", arguments: { command: "ls -la" }, id: "call_a" },
          { name: "read_file", arguments: '{"path": "a.txt"' },
        ],
      },
    });
    const tools = [
      { name: "bash", description: "Run a command", parameters: { type: "object" } },
      { name: "read_file", description: "Read a file", parameters: { type: "object" } },
    ];

    const response = await modelFor().complete(request({ tools }));

    expect(response.text).toBe("Let me look.");
    expect(response.toolCalls).toEqual([
      { id: "call_a", name: "bash", arguments: '{"command":"ls -la"}' },
      { id: expect.any(String), name: "read_file", arguments: '{"path": "a.txt"' },
    ]);
    expect(response.finishReason).toBe("tool_calls");
    expect(fake.requests[0]?.tools).toEqual(["bash", "read_file"]);
    fake.assertAllUsed();
  });

  it("sends earlier tool calls and results back in OpenAI's shape", async () => {
    fake.script({ reply: { text: "done" } });
    const call = { id: "call_1", name: "bash", arguments: "{}" };

    await modelFor().complete(
      request({
        messages: [
          { role: "user", content: "go" },
          { role: "assistant", content: null, tool_calls: [call] },
          { role: "tool", tool_call_id: "call_1", content: '{"ok":true}' },
        ],
      }),
    );

    expect(fake.requests[0]?.messages[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "bash", arguments: "{}" } }],
    });
    expect(fake.requests[0]?.lastMessage).toEqual({
      role: "tool",
      tool_call_id: "call_1",
      content: '{"ok":true}',
    });
  });

  it("retries a 500 through the SDK and then succeeds", async () => {
    fake.script([{ reply: { status: 500, text: "overloaded" } }, { reply: { text: "ok" } }]);

    const response = await modelFor().complete(request());

    expect(response.text).toBe("ok");
    expect(fake.requests).toHaveLength(2);
    fake.assertAllUsed();
  });

  it("turns a persistent 500 into a ModelError with the status", async () => {
    fake.script({ reply: { status: 500, text: "the GPU caught fire" }, times: 3 });

    const error = await rejectionOf(modelFor().complete(request()));

    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).status).toBe(500);
    expect(error.message).toBe("model server answered 500: the GPU caught fire");
    expect(fake.requests).toHaveLength(3);
  });

  it("gives up on a server that sends headers and then stalls", async () => {
    fake.script({ reply: { hang: true } });
    const started = Date.now();

    const error = await rejectionOf(
      modelFor({ timeoutMs: 1000, maxRetries: 0 }).complete(request()),
    );

    expect(error).toBeInstanceOf(ModelError);
    expect(error.message).toMatch(/stalled/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("times out a server that never sends headers", async () => {
    fake.script({ reply: { delayMs: 5000, text: "too late" } });

    const error = await rejectionOf(
      modelFor({ timeoutMs: 500, maxRetries: 0 }).complete(request()),
    );

    expect(error).toBeInstanceOf(ModelError);
    expect(error.message).toMatch(/did not answer within 500 ms/);
  });

  it("rejects promptly with an AbortError when the signal aborts mid-stream", async () => {
    fake.script({ reply: { hang: true } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();

    const error = await rejectionOf(modelFor().complete(request({ signal: controller.signal })));

    expect(error.name).toBe("AbortError");
    expect(error).not.toBeInstanceOf(ModelError);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("rejects with an AbortError at once when already aborted", async () => {
    const error = await rejectionOf(modelFor().complete(request({ signal: AbortSignal.abort() })));

    expect(error.name).toBe("AbortError");
  });

  it("names the URL when the server cannot be reached", async () => {
    const url = `http://127.0.0.1:${await freePort()}/v1`;

    const error = await rejectionOf(
      createOpenAIModel({ baseURL: url, maxRetries: 0 }).complete(request()),
    );

    expect(error).toBeInstanceOf(ModelError);
    expect(error.message).toContain(`could not reach model server at ${url}`);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.message).not.toContain("\n");
  });

  it("answers an unscripted request with a 500 and reports it", async () => {
    const error = await rejectionOf(modelFor().complete(request()));

    expect(error.message).toMatch(/no scripted reply for root/);
    expect(fake.unmatched).toHaveLength(1);
    expect(() => fake.assertAllUsed()).toThrow(/no rule matched a request from root/);
  });
});
