// The tool policy (policy.ts): defaults for a new user, patterns, and narrowing that never widens.
import { beforeAll, describe, expect, it } from "vitest";
import { matchesPattern } from "../../src/policy/patterns.js";
import { decide, parseApproveMode, validatePolicy } from "../../src/policy/policy.js";
import { callSubject } from "../../src/policy/subject.js";
import {
  shownTreeRule,
  treePattern,
  treePatternCovers,
  treeRulesCover,
} from "../../src/policy/tree-rules.js";
import { loadShellParser } from "../../src/policy/shell.js";

beforeAll(async () => {
  await loadShellParser();
});

describe("the default policy", () => {
  it("allows reading and the agent tools, asks before writing and running commands", () => {
    for (const tool of ["read_file", "glob", "grep", "fork", "send", "wait", "kill"]) {
      expect(decide(undefined, [], tool, {}).verdict).toBe("allow");
    }
    for (const tool of ["write_file", "edit_file", "bash", "some_new_tool"]) {
      expect(decide(undefined, [], tool, {}).verdict).toBe("ask");
    }
  });
});

describe("patterns", () => {
  const base = validatePolicy(
    { bash: { allow: ["git status", "npm test*"], deny: ["rm -rf *"], ask: ["*"] } },
    "policy",
  );

  it("deny wins over allow, allow over ask; the subject is the command", () => {
    expect(decide(base, [], "bash", { command: "git status" }).verdict).toBe("allow");
    expect(decide(base, [], "bash", { command: "npm test -- --watch" }).verdict).toBe("allow");
    expect(decide(base, [], "bash", { command: "rm -rf /" }).verdict).toBe("deny");
    expect(decide(base, [], "bash", { command: "curl x" })).toEqual({
      verdict: "ask",
      subject: "curl x",
      opaque: [],
    });
  });

  it("matches `*` in linear steps, even against hostile patterns", () => {
    expect(matchesPattern("a*b*c", "axxbyyc")).toBe(true);
    expect(matchesPattern("a*b*c", "axxbyy")).toBe(false);
    expect(matchesPattern(`${"*a".repeat(50)}b`, "a".repeat(5000))).toBe(false);
  });

  it("file tools match on the path", () => {
    const files = validatePolicy({ write_file: { allow: ["notes/*"], default: "deny" } }, "p");
    expect(decide(files, [], "write_file", { path: "notes/a.md" }).verdict).toBe("allow");
    expect(decide(files, [], "write_file", { path: "src/a.ts" }).verdict).toBe("deny");
  });
});

describe("narrowing", () => {
  it("a profile's policy can only make a call stricter", () => {
    const loose = validatePolicy({ bash: "allow" }, "policy");
    const strict = validatePolicy({ bash: "deny", read_file: "allow" }, "profile");
    const widening = validatePolicy({ write_file: "allow" }, "profile");
    expect(decide(loose, [strict!], "bash", { command: "ls" }).verdict).toBe("deny");
    expect(decide(undefined, [widening!], "write_file", { path: "a" }).verdict).toBe("ask");
  });
});

describe("tree patterns", () => {
  it("remember the program and its subcommand, covering the bare command too", () => {
    expect(treePattern("bash", "git commit -m x")).toBe("git commit *");
    expect(treePatternCovers("git commit *", "git commit")).toBe(true);
    expect(treePatternCovers("git commit *", "git commit --amend")).toBe(true);
    expect(treePatternCovers("git commit *", "git push")).toBe(false);
    expect(treePatternCovers("git commit *", "gitk")).toBe(false);
    // Was `*` for any file tool: now the path's directory.
    expect(treePattern("write_file", "a/b")).toBe("a/*");
  });
});

describe("a tool other than bash and the file tools (issue 38, item 3)", () => {
  const tool = "mcp__tracker__ping";
  const args = { path: "README.md", command: "rm -rf ~", nested: { z: 1, a: [2] } };

  it("is named by the whole call: every argument, keys sorted", () => {
    const subject = '{"command":"rm -rf ~","nested":{"a":[2],"z":1},"path":"README.md"}';
    expect(callSubject(tool, args)).toBe(subject);
    expect(decide(undefined, [], tool, args)).toEqual({ verdict: "ask", subject, opaque: [] });
    expect(callSubject(tool, {})).toBe("");
  });

  it("allow for the tree stores any arguments, never a rule keyed on one field", () => {
    expect(treePattern(tool, callSubject(tool, args))).toBe("*");
    expect(treePattern(tool, callSubject(tool, { path: "README.md" }))).toBe("*");
    expect(shownTreeRule("*", tool)).toBe(`${tool}(*), any arguments`);
    expect(treeRulesCover(tool, ["*"], callSubject(tool, args))).toBe(true);
  });

  it("a rule stored keyed on one field (before) covers no call", () => {
    expect(treeRulesCover(tool, ["README.md"], callSubject(tool, args))).toBe(false);
    expect(treeRulesCover(tool, ["README.md"], callSubject(tool, { path: "README.md" }))).toBe(
      false,
    );
    expect(treeRulesCover(tool, ["README.md"], "README.md")).toBe(false);
  });
});

describe("config errors", () => {
  it("name the bad entry in one line", () => {
    expect(() => validatePolicy({ bash: "maybe" }, "policy")).toThrow("policy.bash must be");
    expect(() => validatePolicy({ bash: { permit: [] } }, "policy")).toThrow(
      'unknown key "permit"',
    );
    expect(() => parseApproveMode("sometimes")).toThrow("--approve must be ask, all or none");
    expect(parseApproveMode("ask-fail")).toBe("none");
  });
});
