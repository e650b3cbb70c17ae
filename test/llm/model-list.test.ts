// listModels reads a model's context window under each name servers use for it: OpenRouter's
// `context_length`, vLLM's `max_model_len`, llama.cpp's `meta.n_ctx`, … (AUDIT item 7). A real
// local HTTP server answers `/models` as each of those servers does.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listModels } from "../../src/llm/model-list.js";

let server: http.Server;
let baseURL: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url !== "/v1/models") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        object: "list",
        data: [
          { id: "qwen/qwen3-32b", object: "model", context_length: 40_960 }, // OpenRouter
          { id: "served", object: "model", max_model_len: 32_768 }, // vLLM
          { id: "local.gguf", object: "model", meta: { n_ctx_train: 8192 } }, // llama.cpp
          { id: "plain", object: "model" },
          { id: "odd", object: "model", context_length: "big" },
        ],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("listModels", () => {
  it("takes each server's name for the context window, and none that is not a whole number", async () => {
    expect(await listModels({ baseURL })).toEqual([
      { id: "qwen/qwen3-32b", contextWindow: 40_960 },
      { id: "served", contextWindow: 32_768 },
      { id: "local.gguf", contextWindow: 8192 },
      { id: "plain" },
      { id: "odd" },
    ]);
  });
});
