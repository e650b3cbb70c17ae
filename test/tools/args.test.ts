// Tool arguments are judged by the schema each tool declares to the model (ajv, compiled once):
// errors keep INVALID_ARGS and lead with the bad field's path. Output schemas compile or say why.
import { describe, expect, it } from "vitest";
import { checkArgs, checkResult, compileOutputSchema, objectSchema } from "../../src/tools/args.js";
import { allTools } from "../../src/tools/registry.js";

const schema = objectSchema(
  {
    name: { type: "string", minLength: 1, description: "" },
    count: { type: "integer", minimum: 1, maximum: 10, description: "" },
    flag: { type: "boolean", description: "" },
  },
  ["name"],
);

describe("checkArgs", () => {
  it("passes valid arguments through and drops null optionals", () => {
    expect(checkArgs(schema, { name: "x", count: 3, flag: null })).toEqual({
      ok: true,
      value: { name: "x", count: 3 },
    });
  });

  it.each([
    [null, "arguments must be a JSON object, got null"],
    ["x", "arguments must be a JSON object, got string"],
    [[], "arguments must be a JSON object, got array"],
    [{}, "/name is required"],
    [{ name: null }, "/name is required"],
    [{ name: 1 }, "/name must be string"],
    [{ name: "" }, "/name must NOT have fewer than 1 characters"],
    [{ name: "x", count: "2" }, "/count must be integer"],
    [{ name: "x", count: 2.5 }, "/count must be integer"],
    [{ name: "x", count: 0 }, "/count must be >= 1"],
    [{ name: "x", count: 11 }, "/count must be <= 10"],
    [{ name: "x", flag: 1 }, "/flag must be boolean"],
    [{ name: "x", toString: 1 }, "/toString is not a known field; expected: name, count, flag"],
    [{ name: "a\u0000b" }, "/name contains a NUL byte (\\x00) at character 2"],
    [{ count: 0, flag: "y" }, "/name is required; /count must be >= 1; /flag must be boolean"],
  ])("rejects %j: %s", (args, message) => {
    expect(checkArgs(schema, args)).toEqual({
      ok: false,
      error: { code: "INVALID_ARGS", message },
    });
  });

  it("compiles every tool's declared schema (strict) and names nested fields", () => {
    for (const tool of allTools) {
      expect(() => checkArgs(tool.parameters, {}), tool.name).not.toThrow();
    }
    const fork = allTools.find((t) => t.name === "fork")!;
    expect(checkArgs(fork.parameters, { name: " ", prompt: "p", budget: { turns: 0 } })).toEqual({
      ok: false,
      error: {
        code: "INVALID_ARGS",
        message: "/name must not be blank; /budget/turns must be >= 1",
      },
    });
  });
});

describe("output schemas", () => {
  const point = {
    type: "object",
    properties: { x: { type: "number" }, y: { type: "number" } },
    required: ["x", "y"],
    additionalProperties: false,
  };

  it("refuses what ajv refuses, in one line", () => {
    expect(compileOutputSchema({ type: "nonsense" })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^invalid JSON Schema: .*type/),
    });
    expect(compileOutputSchema("x")).toMatchObject({ ok: false });
    expect(compileOutputSchema(point).ok).toBe(true);
  });

  it("parses a result (a ```json fence allowed) and lists each bad field's path", () => {
    expect(checkResult(point, '{"x":1,"y":2}')).toEqual({ ok: true, value: { x: 1, y: 2 } });
    expect(checkResult(point, '```json\n{"x":1,"y":2}\n```')).toEqual({
      ok: true,
      value: { x: 1, y: 2 },
    });
    expect(checkResult(point, '{"x":"1"}')).toEqual({
      ok: false,
      error: "/y is required; /x must be number",
    });
    expect(checkResult(point, "x is 1")).toMatchObject({ ok: false, error: /not one JSON value/ });
  });
});
