// Stored text rules (SPEC §2): names and texts are checked with INVALID_ARGS saying what was wrong.
import { describe, expect, it } from "vitest";
import { AgentError } from "../../src/agents/errors.js";
import {
  scrubJson,
  scrubText,
  textProblem,
  validateName,
  validateText,
} from "../../src/agents/text.js";

function invalid(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).code).toBe("INVALID_ARGS");
    return (err as AgentError).message;
  }
  throw new Error("expected INVALID_ARGS");
}

describe("validateName", () => {
  it("trims and accepts 1-64 characters, counting code points", () => {
    expect(validateName("  worker  ")).toBe("worker");
    expect(validateName("é".repeat(64))).toBe("é".repeat(64));
    expect(validateName("😀".repeat(64))).toHaveLength(128); // 64 characters, 128 UTF-16 units
    expect(invalid(() => validateName("a".repeat(65)))).toMatch(/65 characters; at most 64/);
  });

  it("refuses empty names, control characters and the reserved word", () => {
    expect(invalid(() => validateName("   "))).toMatch(/non-empty/);
    expect(invalid(() => validateName(42))).toMatch(/non-empty string/);
    for (const bad of ["a\u0000b", "x\u001b[2J", "a\u007fb", "a\u009bb", "a\nb", "a\tb"]) {
      expect(invalid(() => validateName(bad))).toMatch(/NUL|control characters/);
    }
    expect(invalid(() => validateName("x\u001b]0;pwned\u0007"))).toMatch(/\\x1b at character 2/);
    expect(invalid(() => validateName("parent"))).toMatch(/reserved/);
  });
});

describe("validateText", () => {
  it("refuses NUL and lone surrogates, saying where", () => {
    expect(invalid(() => validateText("ab\u0000", "message"))).toBe(
      "message contains a NUL byte (\\x00) at character 3",
    );
    expect(invalid(() => validateText("a\ud800b", "prompt"))).toMatch(
      /prompt is not valid UTF-8 \(lone surrogate \\ud800 at character 2\)/,
    );
    expect(invalid(() => validateText("\udc00", "prompt"))).toMatch(/lone surrogate \\udc00/);
    expect(invalid(() => validateText(7, "message"))).toMatch(/must be a string/);
  });

  it("accepts any other text, including pairs, quotes, SQL and escapes", () => {
    for (const good of ["😀", "'; drop table agents; --", "\\x00", "a\u001bb", "\r\n\t"]) {
      expect(validateText(good, "message")).toBe(good);
      expect(textProblem(good)).toBeUndefined();
    }
  });
});

describe("scrubText / scrubJson", () => {
  it("makes tool output storable without dropping the rest", () => {
    expect(scrubText("a\u0000b\ud800c")).toBe("a\ufffdb\ufffdc");
    expect(scrubText("fine 😀")).toBe("fine 😀");
    expect(scrubJson({ k: ["x\u0000", { "n\u0000": 1 }], d: null })).toEqual({
      k: ["x\ufffd", { "n\ufffd": 1 }],
      d: null,
    });
  });
});
