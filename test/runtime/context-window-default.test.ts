// The context window assumed when neither the config nor the server's /models says: chosen by the
// server (OpenAI's own API or not), not by whether a base URL was given (AUDIT item 1).
import { describe, expect, it } from "vitest";
import { defaultContextWindow, DEFAULT_CONTEXT_WINDOW } from "../../src/runtime/compaction.js";

describe("defaultContextWindow", () => {
  it("is 128k for OpenAI, with or without its base URL written out", () => {
    expect(defaultContextWindow(undefined)).toBe(128_000);
    expect(defaultContextWindow("https://api.openai.com/v1")).toBe(128_000);
    expect(defaultContextWindow("https://API.OpenAI.com/v1/")).toBe(128_000);
  });

  it("is 32k for any other server, and for a base URL that does not parse", () => {
    expect(DEFAULT_CONTEXT_WINDOW).toBe(32_768);
    for (const url of [
      "http://localhost:11434/v1",
      "https://openrouter.ai/api/v1",
      "https://api.openai.com.example.net/v1",
      "not a url",
    ]) {
      expect(defaultContextWindow(url)).toBe(DEFAULT_CONTEXT_WINDOW);
    }
  });
});
