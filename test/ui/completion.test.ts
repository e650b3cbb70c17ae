// Tab completion: command names, and model names after `/model ` from the server's list.
import { describe, expect, it } from "vitest";
import { completeInput } from "../../src/ui/completion.js";

const models = async () => ["gpt-4o", "gpt-4o-mini", "llama3"];

describe("completeInput", () => {
  it("completes a unique command, lists several, leaves other text alone", async () => {
    expect(await completeInput("/cap", models)).toEqual({ text: "/capture " });
    expect(await completeInput("/c", models)).toEqual({ hint: "/capture  /cancel" });
    expect(await completeInput("hello", models)).toEqual({});
  });

  it("completes model names to the longest common prefix", async () => {
    expect(await completeInput("/model ll", models)).toEqual({ text: "/model llama3" });
    expect(await completeInput("/model g", models)).toEqual({ text: "/model gpt-4o" });
    expect(await completeInput("/model gpt-4o", models)).toEqual({ hint: "gpt-4o  gpt-4o-mini" });
    expect(await completeInput("/model x", models)).toEqual({
      hint: "no matching models (the server lists none)",
    });
  });
});
