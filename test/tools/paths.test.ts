// Shared tool helpers: schema-driven argument checks, path display, fs error mapping, and that
// the work tools are offered alphabetised with strict schemas.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkArgs, displayPath, fsFailure, objectSchema } from "../../src/tools/paths.js";
import { workTools } from "../../src/tools/work-tools.js";

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
    [{}, 'missing required argument "name" (string)'],
    [{ name: null }, 'missing required argument "name" (string)'],
    [{ name: 1 }, '"name" must be a string, got number'],
    [{ name: "" }, '"name" must not be empty'],
    [{ name: "x", count: "2" }, '"count" must be a number, got string'],
    [{ name: "x", count: 2.5 }, '"count" must be an integer, got 2.5'],
    [{ name: "x", count: 0 }, '"count" must be at least 1, got 0'],
    [{ name: "x", count: 11 }, '"count" must be at most 10, got 11'],
    [{ name: "x", flag: 1 }, '"flag" must be a boolean, got number'],
    [{ name: "x", toString: 1 }, 'unknown argument "toString"; expected: name, count, flag'],
  ])("rejects %j: %s", (args, message) => {
    expect(checkArgs(schema, args)).toEqual({
      ok: false,
      error: { code: "INVALID_ARGS", message },
    });
  });
});

describe("displayPath and fsFailure", () => {
  it("shows paths inside cwd relatively and others absolutely", () => {
    expect(displayPath("/w", "/w/a/b.ts")).toBe("a/b.ts");
    expect(displayPath("/w", "/w")).toBe(".");
    expect(displayPath("/w", "/other/x")).toBe("/other/x");
    expect(displayPath("/w", "/w/..x")).toBe("..x");
  });

  it("maps unexpected errors to INTERNAL", () => {
    expect(fsFailure("/w", new Error("boom"))).toEqual({
      ok: false,
      error: { code: "INTERNAL", message: "internal error: boom" },
    });
    const denied = Object.assign(new Error("denied"), {
      code: "EACCES",
      path: path.join("/w", "f"),
    });
    expect(fsFailure("/w", denied)).toMatchObject({ error: { code: "NOT_ALLOWED" } });
  });
});

describe("workTools", () => {
  it("is alphabetised, with strict object schemas and descriptions", () => {
    const names = workTools.map((tool) => tool.name);
    expect(names).toEqual(["bash", "edit_file", "glob", "grep", "read_file", "write_file"]);
    for (const tool of workTools) {
      expect(tool.description.length).toBeGreaterThan(20);
      expect(tool.parameters).toMatchObject({ type: "object", additionalProperties: false });
      expect((tool.parameters.required as string[]).length).toBeGreaterThan(0);
    }
  });
});
