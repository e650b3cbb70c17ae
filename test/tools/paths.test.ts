// Shared tool helpers: path display, fs error mapping, and that
// the work tools are offered alphabetised with strict schemas.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { displayPath, fsFailure } from "../../src/tools/paths.js";
import { workTools } from "../../src/tools/work-tools.js";

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
