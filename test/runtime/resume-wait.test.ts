// A wait or claim resumed after its worker died waits only for the time it had left
// (src/runtime/resume.ts remainingWait): a claim that named no timeout had the default's.
import { describe, expect, it } from "vitest";
import { remainingWait } from "../../src/runtime/resume.js";
import { DEFAULT_CLAIM_TIMEOUT } from "../../src/tools/task-claim.js";

describe("remainingWait", () => {
  it("takes the seconds spent off the timeout, never below 0", () => {
    expect(JSON.parse(remainingWait('{"timeout":30,"from_agents":["a"]}', 12.5))).toEqual({
      timeout: 17.5,
      from_agents: ["a"],
    });
    expect(JSON.parse(remainingWait('{"timeout":5}', 9))).toEqual({ timeout: 0 });
  });

  it("a claim that named no timeout had the default's", () => {
    expect(JSON.parse(remainingWait("{}", 20, DEFAULT_CLAIM_TIMEOUT))).toEqual({
      timeout: DEFAULT_CLAIM_TIMEOUT - 20,
    });
    expect(JSON.parse(remainingWait("null", 20, DEFAULT_CLAIM_TIMEOUT))).toEqual({
      timeout: DEFAULT_CLAIM_TIMEOUT - 20,
    });
  });

  it("leaves malformed arguments for the tool to refuse", () => {
    for (const text of ["{", "[1]", '"x"', '{"timeout":"soon"}']) {
      expect(remainingWait(text, 3, DEFAULT_CLAIM_TIMEOUT)).toBe(text);
    }
    // A wait has no default: without a timeout it is refused by the tool, unchanged here.
    expect(remainingWait("{}", 3)).toBe("{}");
  });
});
